"""Triton's compile facts of each launch, read on the GPU for the bench (tutor.bench.facts).

Every Triton launch goes through `CompiledKernel.launch_metadata(grid, stream, *args)` with the
grid already resolved (a callable grid has been called), so wrapping it sees the launch's
kernel (its registers, spills, shared memory, warps, stages, PTX and Triton IR) and grid,
autotuned launches included. Metadata fields move between Triton versions: each is read with
getattr and may be None.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

MAX_INTS = 24  # integer arguments kept per launch (block sizes, lengths, strides)
MMA = re.compile(r"\b(?:wgmma|mma)\.")  # a tensor-core instruction in the PTX
# A tl.dot in the Triton IR: `tt.dot %a, %b, %acc ... : tensor<MxKxbf16> * tensor<KxNxbf16> ->`.
# Its operands' shapes are the tile the program multiplies, whatever the source names them,
# and however many tiles each program walks (a persistent kernel's grid says nothing of them).
DOT = re.compile(
    r"\btt\.dot\s[^\n]*?:\s*tensor<(\d+)x(\d+)x[a-z]\w*>\s*\*\s*tensor<\d+x(\d+)x[a-z]"
)
# The GPU's exponential is 2^x (ex2.approx). tl.exp2 compiles to its flush-to-zero form
# (ex2.approx.ftz.f32: one instruction); tl.exp(x) to 2^(x * log2 e) through the form that keeps
# denormal results (ex2.approx.f32), which ptxas wraps in a range check and two multiplies.
# Counted in the PTX text, per instruction written (a loop body counts once).
EX2 = re.compile(r"^\s*ex2\.approx\.", re.MULTILINE)
EX2_DENORMAL = re.compile(r"^\s*ex2\.approx\.f32\s", re.MULTILINE)


@contextlib.contextmanager
def recorded_launches() -> Iterator[list[dict[str, Any]]]:
    """Every Triton launch made inside the block, as facts (the list fills as they happen)."""
    from triton.compiler.compiler import CompiledKernel

    found: list[dict[str, Any]] = []
    original = CompiledKernel.launch_metadata

    def recording(self, grid, stream, *args):
        try:
            found.append(_launch(self, grid, args))
        except Exception as exc:  # noqa: BLE001 - facts are evidence only; never break a call
            found.append({"kernel": getattr(self, "name", "?"), "error": str(exc)[:200]})
        return original(self, grid, stream, *args)

    CompiledKernel.launch_metadata = recording
    try:
        yield found
    finally:
        CompiledKernel.launch_metadata = original


def _launch(kernel: Any, grid: Any, args: tuple) -> dict[str, Any]:
    kernel._init_handles()  # n_regs and n_spills are read when the binary is loaded
    dims = [int(d) for d in (grid if isinstance(grid, (tuple, list)) else (grid,))]
    dims += [1] * (3 - len(dims))
    metadata = kernel.metadata
    programs = dims[0] * dims[1] * dims[2]
    names = list(getattr(getattr(kernel.src, "fn", None), "arg_names", []) or [])
    ints = {
        name: value
        for name, value in zip(names, args, strict=False)
        if isinstance(value, int) and not isinstance(value, bool)
    }
    ptx, ttir = _asm(kernel, "ptx"), _asm(kernel, "ttir")
    return {
        "kernel": getattr(kernel, "name", None) or getattr(metadata, "name", "?"),
        "grid": dims,
        "programs": programs,
        "n_regs": getattr(kernel, "n_regs", None),
        "n_spills": getattr(kernel, "n_spills", None),
        "shared": getattr(metadata, "shared", None),
        "num_warps": getattr(metadata, "num_warps", None),
        "num_stages": getattr(metadata, "num_stages", None),
        "num_ctas": getattr(metadata, "num_ctas", None),
        "tensor_cores": None if ptx is None else bool(MMA.search(ptx)),
        "dot_tiles": dot_tiles(ttir),
        **exp_facts(ptx),
        "ints": dict(list(ints.items())[:MAX_INTS]),
    }


def _asm(kernel: Any, stage: str) -> str | None:
    """One stage of the compiled kernel's text (`ptx`, `ttir`), or None where it is missing."""
    try:
        return kernel.asm.get(stage) if hasattr(kernel.asm, "get") else kernel.asm[stage]
    except (KeyError, TypeError):
        return None


def dot_tiles(ttir: str | None) -> list[list[int]] | None:
    """The [M, N, K] of every distinct two-dimensional tl.dot in a kernel's Triton IR, in order
    (a batched, three-dimensional dot is left out); None without the IR."""
    if ttir is None:
        return None
    found: list[list[int]] = []
    for m, k, n in DOT.findall(ttir):
        tile = [int(m), int(n), int(k)]
        if tile not in found:
            found.append(tile)
    return found


def exp_facts(ptx: str | None) -> dict[str, int | None]:
    """How many exponentials a kernel's PTX holds, and how many of them keep denormal results
    (a tl.exp's; a tl.exp2 flushes them to zero, in one instruction)."""
    if ptx is None:
        return {"exp_ops": None, "exp_denormal": None}
    return {"exp_ops": len(EX2.findall(ptx)), "exp_denormal": len(EX2_DENORMAL.findall(ptx))}
