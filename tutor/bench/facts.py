"""The compile and launch facts of one call of a kernel's host function, read on the GPU.

    limits = device_limits()              # the card: SMs, registers, shared memory, warps
    facts = call_facts(lambda: fn(*inputs))
    # {"launches": [{"kernel", "grid", "programs", "n_regs", "n_spills", "shared",
    #                "num_warps", "num_stages", "tensor_cores", "dot_tiles", "exp_ops",
    #                "exp_denormal", "ints"}, ...],
    #  "kernels": [{"name", "us", "triton"}, ...]}   # every GPU kernel, torch's included

Runs in the bench process (tutor.bench.child), which has a GPU; everything it returns is plain
JSON, read by the perf coach (tutor.bench.occupancy, tutor.bench.rules) in the tutor's process.

- Every Triton launch in the call goes through `CompiledKernel.launch_metadata(grid, stream,
  *args)` with the grid already resolved (a callable grid has been called), so wrapping it sees
  the launch's kernel (its registers, spills, shared memory, warps, stages and PTX) and grid,
  autotuned launches included.
- The torch profiler (CUPTI) sees every kernel the call ran on the GPU, torch's own as well
  (a `.contiguous()` copy, a `.float()` cast, a `zeros` fill), with its GPU time: what a call
  launches beyond the learner's kernels, and where its time goes.

Metadata fields move between Triton versions: each is read with getattr and may be None.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

from tutor.bench.gpu_lock import exclusive

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
RESERVED_SHARED_PER_BLOCK = 1024  # the driver keeps 1 KB of shared memory per block (sm_80+)
REGISTER_UNIT = 256  # registers are allocated per warp, 256 at a time
MAX_BLOCKS_PER_SM = {9: 32, 8: 32, 7: 32}  # resident blocks per SM by compute capability major


def device_limits(device: int = 0) -> dict[str, Any]:
    """What bounds how many programs an SM holds at once, and how many SMs there are."""
    import torch

    props = torch.cuda.get_device_properties(device)
    limits: dict[str, Any] = {
        "sms": props.multi_processor_count,
        "warp_size": getattr(props, "warp_size", 32),
        "max_threads_per_sm": getattr(props, "max_threads_per_multi_processor", 2048),
        "regs_per_sm": getattr(props, "regs_per_multiprocessor", 65536),
        "shared_per_sm": getattr(props, "shared_memory_per_multiprocessor", None),
        "shared_per_block": getattr(props, "shared_memory_per_block_optin", None),
        "max_blocks_per_sm": MAX_BLOCKS_PER_SM.get(props.major, 16),
        "register_unit": REGISTER_UNIT,
        "reserved_shared_per_block": RESERVED_SHARED_PER_BLOCK,
        "capability": f"{props.major}.{props.minor}",
        "l2_bytes": getattr(props, "L2_cache_size", None),
    }
    try:  # Triton's own reading of the same card, where torch lacks a field
        from triton.runtime import driver

        found = driver.active.utils.get_device_properties(device)
        limits["max_regs_per_block"] = found.get("max_num_regs")
        if limits["shared_per_block"] is None:
            limits["shared_per_block"] = found.get("max_shared_mem")
    except Exception:  # noqa: BLE001 - torch's fields are enough
        pass
    if limits["shared_per_sm"] is None and limits["shared_per_block"]:
        limits["shared_per_sm"] = limits["shared_per_block"] + RESERVED_SHARED_PER_BLOCK
    return limits


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


def profiled_kernels(call: Callable[[], Any]) -> list[dict[str, Any]]:
    """Every GPU kernel (and memory copy or fill) one `call` ran, with its GPU time in µs."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    kernels = []
    for event in prof.events():
        if str(getattr(event, "device_type", "")).split(".")[-1] != "CUDA":
            continue
        us = getattr(event, "device_time", None)
        if us is None:
            us = getattr(event, "cuda_time", 0.0)
        kernels.append({"name": event.name, "us": round(float(us or 0.0), 3)})
    return kernels


def call_facts(call: Callable[[], Any]) -> dict[str, Any]:
    """The launches of one call (with their compile facts) and every kernel it ran on the GPU.

    The call is made twice: once with the launches recorded (its compiles already done by the
    caller), once under the profiler; recording is cheap, profiling is not, and neither may
    change what the other sees.
    """
    import torch

    with exclusive():
        with recorded_launches() as launches:
            call()
            torch.cuda.synchronize()
        facts: dict[str, Any] = {"launches": launches, "kernels": [], "profile_error": None}
        try:
            kernels = profiled_kernels(call)
        except Exception as exc:  # noqa: BLE001 - the launches alone still say a lot
            facts["profile_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            return facts
        triton_names = {launch.get("kernel") for launch in launches}
        for kernel in kernels:
            kernel["triton"] = kernel["name"] in triton_names
        facts["kernels"] = kernels
        return facts
