#!/usr/bin/env python3
"""Does Triton's own warp specialization take m3's attention nearer SDPA on Hopper?

    python scripts/probe_attention_ws.py [--out DIR]     # GPU: a table, and JSON in DIR
    TRITON_INTERPRET=1 python scripts/probe_attention_ws.py --check   # CPU: the outputs

What SDPA does that m3's solution does not: FlashAttention-3 and cuDNN give the tile loads to a
producer warp and split the 128 query rows between two consumer warpgroups, whose softmax and
multiplies the SM interleaves. Triton can do this itself on sm_90 since 3.5: the key loop
written `tl.range(..., warp_specialize=True)`, and (Triton's pull request 7658, merged
2025-07-25) the tensor descriptors made inside the kernel (`tl.make_tensor_descriptor`), as its
data partitioning does not work with descriptors made on the host, which is how the solution
makes them. The earlier try (the solution's loop with warp_specialize=True, host descriptors:
2025 us at S = 4096 against 1885, _config's docstring) left that out.

Here the solution's key loop, rewritten lean (one unmasked loop, the diagonal's blocks masked
when causal, one program a tile, the solution's grid), with its descriptors made in the kernel,
warp-specialized or not, at several tiles, timed in turn with SDPA and the solution (CUDA
graphs, tutor.bench.timing.graphs_us) at b4 h32 d128 bf16. "seq const" makes S a compile-time
constant, as Triton's fused-attention tutorial does, so that the loop's trip count is known.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from probe_attention_tiles import SHAPES, against_sdpa  # noqa: E402 - scripts is on the path
from tune_sweep import load_solution, probe_main  # noqa: E402

from tutor.bench.recipe import load_recipes  # noqa: E402


class Variant(NamedTuple):
    """One launch of _attn_device_desc."""

    block_m: int
    block_n: int
    warps: int
    stages: int
    ws: bool  # the key loops warp-specialized
    seq_const: bool = False  # S a compile-time constant

    @property
    def name(self) -> str:
        words = "ws" if self.ws else "no ws"
        words += " seq const" if self.seq_const else ""
        return f"{words} {self.block_m}x{self.block_n} w{self.warps} s{self.stages}"


# Triton 3.9 compiles for sm_90 (locally): warp-specialized at num_warps=4 only, as 12 warps (a
# producer and two consumer warpgroups, 168 registers each thread); at 8 warps the loop is left
# as it was (189 registers). 128 x 128 on 3 stages wants 246,336 bytes of shared memory, over
# the 232,448 an SM has. Causal fails to compile (NVGPUWarpSpecialization) even with only the
# unmasked loop specialized, as pull request 7658's title says: Hopper's is for non-causal.
VARIANTS = (
    Variant(128, 128, 8, 3, ws=False),
    Variant(128, 128, 8, 3, ws=False, seq_const=True),
    Variant(128, 64, 4, 2, ws=True),
    Variant(128, 64, 4, 3, ws=True),
    Variant(128, 128, 4, 2, ws=True),
    Variant(128, 128, 4, 2, ws=True, seq_const=True),
    Variant(64, 128, 4, 3, ws=True),
    Variant(64, 64, 4, 3, ws=True),
    Variant(128, 128, 8, 2, ws=True),
)
CAUSAL_VARIANTS = tuple(variant for variant in VARIANTS if not variant.ws)


@triton.jit
def _fold_keys(acc, l_i, m_i, q, k_desc, v_desc, row0, start_m, lo, hi, qk_scale,
               DIAGONAL: tl.constexpr, WS: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):  # fmt: skip
    """Key blocks [lo, hi) folded into the online softmax; on the DIAGONAL, key j > query i
    hidden."""
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WS):
        k = k_desc.load([row0 + start_n, 0]).T
        qk = tl.dot(q, k)
        if DIAGONAL:
            rows = start_m + tl.arange(0, BLOCK_M)
            visible = rows[:, None] >= (start_n + tl.arange(0, BLOCK_N))[None, :]
            qk = tl.where(visible, qk * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, axis=1))
            qk = qk - m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        p = tl.exp2(qk)
        alpha = tl.exp2(m_i - m_new)
        l_ij = tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row0 + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + l_ij  # last, as Triton's tutorial: fewer registers live at once
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _rows(ptr, n_rows, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    """A descriptor over contiguous [n_rows, HEAD_DIM] rows, made in the kernel."""
    return tl.make_tensor_descriptor(ptr, [n_rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK, HEAD_DIM])


@triton.jit
def _attn_device_desc(q_ptr, k_ptr, v_ptr, o_ptr, n_rows, seq_len_arg, qk_scale,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      CAUSAL: tl.constexpr, WS: tl.constexpr, SEQ_LEN: tl.constexpr):  # fmt: skip
    """Attention over contiguous [B * H * S, D] rows, S a multiple of both blocks: one program
    a (query block, head) tile, the descriptors made here. SEQ_LEN > 0 is S as a constant."""
    if SEQ_LEN > 0:
        seq_len = SEQ_LEN
    else:
        seq_len = seq_len_arg
    q_desc = tl.make_tensor_descriptor(
        q_ptr, [n_rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM]
    )
    k_desc = tl.make_tensor_descriptor(
        k_ptr, [n_rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM]
    )
    v_desc = tl.make_tensor_descriptor(
        v_ptr, [n_rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM]
    )
    block = tl.program_id(0)
    if CAUSAL:  # the query blocks with the most keys first, as the solution
        block = tl.num_programs(0) - 1 - block
    start_m = block * BLOCK_M
    row0 = tl.program_id(1) * seq_len
    q = q_desc.load([row0 + start_m, 0])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    unmasked_end = start_m if CAUSAL else seq_len
    acc, l_i, m_i = _fold_keys(
        acc, l_i, m_i, q, k_desc, v_desc, row0, start_m, 0, unmasked_end, qk_scale,
        DIAGONAL=False, WS=WS, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
    )  # fmt: skip
    if CAUSAL:
        acc, l_i, m_i = _fold_keys(
            acc, l_i, m_i, q, k_desc, v_desc, row0, start_m, start_m, start_m + BLOCK_M,
            qk_scale, DIAGONAL=True, WS=False, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        )  # fmt: skip
    out = acc / l_i[:, None]
    o_rows = (row0 + start_m + tl.arange(0, BLOCK_M)).to(tl.int64)
    tl.store(o_ptr + o_rows[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :], out.to(q.dtype))


def compiles(variant: Variant, causal: int) -> bool:
    """Whether `variant` compiles and computes attention, tried in a process of its own: a
    compiler pass that fails an assertion ends the process it runs in."""
    index = VARIANTS.index(variant)
    tried = subprocess.run(
        [sys.executable, __file__, "--try", str(index), str(causal)], capture_output=True, text=True
    )
    if tried.returncode != 0:
        print(f"{variant.name} causal={causal}: left out ({tried.stderr.strip()[-300:]})")
    return tried.returncode == 0


def try_one(index: int, causal: int) -> int:
    """--try: VARIANTS[index] on small inputs on the GPU; 0 if it matches SDPA."""
    triton.set_allocator(_scratch)
    variant = VARIANTS[index]
    q, k, v = (torch.randn(1, 2, 512, 128, dtype=torch.bfloat16, device="cuda") for _ in range(3))
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
    got = device_desc(variant)(q, k, v, causal)
    error = float((got.float() - want.float()).abs().max())
    print(f"max error {error:.1e}", file=sys.stderr)
    return 0 if error < 2e-2 else 1


def _scratch(size: int, alignment: int, stream) -> torch.Tensor:
    """Memory for the descriptors a kernel makes (triton.set_allocator): the GPU's, or the
    CPU's under the interpreter (--check)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.empty(size, dtype=torch.int8, device=device)


def device_desc(variant: Variant):
    def call(q, k, v, causal):
        batch, heads, seq_len, head_dim = q.shape
        out = torch.empty_like(q)
        grid = (seq_len // variant.block_m, batch * heads)
        scale = head_dim**-0.5 * 1.4426950408889634
        _attn_device_desc[grid](
            q, k, v, out, batch * heads * seq_len, seq_len, scale, HEAD_DIM=head_dim,
            BLOCK_M=variant.block_m, BLOCK_N=variant.block_n, CAUSAL=bool(causal), WS=variant.ws,
            SEQ_LEN=seq_len if variant.seq_const else 0, num_warps=variant.warps,
            num_stages=variant.stages,
        )  # fmt: skip
        return out

    return call


def timed(shape: dict, op, module) -> list[dict]:
    found = {"SDPA": op.eager, "solution": module.attention}
    variants = CAUSAL_VARIANTS if shape["causal"] else VARIANTS
    found |= {v.name: device_desc(v) for v in variants if compiles(v, shape["causal"])}
    found["solution again"] = module.attention
    return against_sdpa(shape, op, found)


def check() -> int:
    from tutor.kernels.triton import interpreter

    interpreter.install()  # the plain interpreter multiplies bf16 tiles as raw integers
    triton.set_allocator(_scratch)
    ok = True
    for variant in (
        Variant(32, 16, 1, 1, ws=False),
        Variant(32, 32, 1, 1, ws=True, seq_const=True),
    ):
        for causal in (False, True):
            q, k, v = (torch.randn(1, 2, 96, 16, dtype=torch.bfloat16) for _ in range(3))
            want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            got = device_desc(variant)(q, k, v, causal).float()
            ok = ok and torch.allclose(got, want.float(), atol=2e-2)
    print("every variant computes attention" if ok else "a variant is wrong")
    return 0 if ok else 1


def measure() -> list[dict]:
    triton.set_allocator(_scratch)
    op = load_recipes(ROOT / "drills" / "bench" / "m3.py")["attention"]
    module = load_solution("m3_attention")
    return [row for shape in SHAPES for row in timed(shape, op, module)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--try"]:
        return try_one(int(argv[1]), int(argv[2]))
    return probe_main(argv, __doc__, check, measure, "probe-attention-ws.json", "the outputs, CPU")


if __name__ == "__main__":
    raise SystemExit(main())
