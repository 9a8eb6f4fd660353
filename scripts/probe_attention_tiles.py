#!/usr/bin/env python3
"""Which tiles does m3's attention want under sustained load, against SDPA in the same graphs?

    python scripts/probe_attention_tiles.py [--out DIR]     # GPU: a table, and JSON in DIR
    TRITON_INTERPRET=1 python scripts/probe_attention_tiles.py --check   # CPU: the outputs

The whole report of 2026-12-06 (H100, CUDA graphs in turn) had the solution at 88.5% / 88.2%
of SDPA at S = 4096 (causal after the slash) and 75.3% / 87.0% at S = 1024, where probe_tma.py's
one-off timings had S = 1024 at 145 µs and the report 164: the tiles were chosen on a card that
had not warmed up. Here the solution's own kernel runs with each tile config in turn with SDPA
(tutor.bench.timing.graphs_us: untimed replays until the clock settles, then in rotation), at
b4 h32 d128 bf16, inputs rotated past the L2. Only `_config` changes (one program a tile); the
kernel is the solution's, which wants BLOCK_M a multiple of BLOCK_N (a causal program's
unmasked key blocks end where its query block starts). The solution runs twice, first and last
in the list: until the rotation was shuffled each round (2026-12-06, run 8 of
docs/reports/2026-12-06/probes-attention-tail.md), those two places sat next to SDPA in every
round, and read 5-9% slower than the same kernel in a tile row.

Beside them, without the mask, a lean persistent kernel: one or two programs an SM walking the
(query block, head) tiles with one unmasked key loop. "+tail" adds the second, masked key loop
the solution then kept for a partial last block: empty at these shapes, it cost 6% (H100, four
runs: 148.8-155.2 -> 157.3-164.5 us at S = 1024, 2001.7-2012.3 -> 2131.7-2156.1 at S = 4096),
and the solution now compiles it only when it can have work. The lean kernel stays up to 3%
ahead of the solution at S = 4096 and level at S = 1024.

Two things failed on Triton 3.6: storing the output through a descriptor (32 KiB more shared
memory than 128 x 128 tiles on 3 stages leave: 262,200 bytes of 232,448), and
`tl.range(..., flatten=True)`, which asks Triton to pipeline the tile loop and the key loop as
one (Triton's TMA lowering failed on it). The lowering fails on the Q descriptor load outside
the key loop (Triton 3.9 compiling for sm_90 fails the same way), so the flattened variants
("flat") load Q by pointers; flattening is what took m1's descriptor kernel to cuBLAS
(docs/reports/2026-12-06/probes-matmul-layernorm.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from tune_sweep import (  # noqa: E402 - scripts is on the path
    in_turn,
    load_solution,
    print_rows,
    probe_main,
    sm_count,
)

from tutor.bench.recipe import load_recipes  # noqa: E402

DTYPE = "bfloat16"
SHAPES = tuple(
    {"b": 4, "h": 32, "s": s, "d": 128, "causal": causal} for s in (1024, 4096) for causal in (0, 1)
)
# (BLOCK_M, BLOCK_N, num_warps, num_stages)
TILES = (
    (64, 64, 4, 3),
    (128, 64, 8, 3),
    (128, 128, 8, 3),
)
# non-causal only: (BLOCK_M, BLOCK_N, num_warps, num_stages, masked tail loop, programs an SM,
# flattened). Flattened, 128 x 128 on 3 stages asks 327,736 bytes of shared memory (Triton 3.9's
# compile for sm_90 here; 232,448 on an H100), so it runs on 2; the others fit as they are.
PERSISTENT = (
    (128, 128, 8, 3, False, 1, False),
    (128, 128, 8, 2, False, 1, True),
    (128, 64, 8, 3, False, 1, True),
    (128, 64, 8, 2, False, 1, True),
    (64, 64, 4, 3, False, 1, True),
)


@triton.jit
def _fold_keys(acc, l_i, m_i, q, k_desc, v_desc, row0, lo, hi, seq_len, qk_scale,
               MASKED: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """Key blocks [lo, hi) folded into the online softmax; MASKED blocks hide keys past S."""
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.trans(k_desc.load([row0 + start_n, 0]))
        v = v_desc.load([row0 + start_n, 0])
        qk = tl.dot(q, k)
        if MASKED:
            inside = (start_n + tl.arange(0, BLOCK_N)) < seq_len
            qk = tl.where(inside[None, :], qk * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, axis=1))
            p = tl.exp2(qk - m_new[:, None])
        else:
            m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
            p = tl.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attn_persistent(
    q_desc,
    q_ptr,
    k_desc,
    v_desc,
    o_ptr,
    n_tiles,
    seq_len,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    TAIL: tl.constexpr,
    FLAT: tl.constexpr,
):
    """Non-causal attention, S a multiple of both blocks: a few programs an SM walk the (query
    block, head) tiles. TAIL adds the solution's second, masked key loop from the last whole
    block to S: empty at these shapes, but the compiler cannot know it, as in the solution
    before it compiled that loop only when S leaves a partial block. FLAT pipelines the tile
    loop and the key loop as one, so a tile's first key blocks load while the last one's output
    is stored (what took m1 to cuBLAS); Q is then loaded by pointers, since Triton's TMA
    lowering fails on a descriptor load outside the inner loop of a flattened nest (3.6 and
    3.9 alike)."""
    blocks_m = seq_len // BLOCK_M
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0), flatten=FLAT):
        row0 = (tile // blocks_m) * seq_len  # this head's first row in [B * H * S, D]
        q_row = row0 + (tile % blocks_m) * BLOCK_M
        if FLAT:
            q_rows = (q_row + offs_m).to(tl.int64)
            q = tl.load(q_ptr + q_rows[:, None] * HEAD_DIM + offs_d[None, :])
        else:
            q = q_desc.load([q_row, 0])
        m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        whole = (seq_len // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _fold_keys(acc, l_i, m_i, q, k_desc, v_desc, row0, 0, whole, seq_len,
                                   qk_scale, MASKED=False, BLOCK_N=BLOCK_N)  # fmt: skip
        if TAIL:
            acc, l_i, m_i = _fold_keys(acc, l_i, m_i, q, k_desc, v_desc, row0, whole, seq_len,
                                       seq_len, qk_scale, MASKED=True, BLOCK_N=BLOCK_N)  # fmt: skip
        out = acc / l_i[:, None]
        o_rows = (q_row + offs_m).to(tl.int64)
        tl.store(o_ptr + o_rows[:, None] * HEAD_DIM + offs_d[None, :], out.to(q.dtype))


def persistent(
    block_m: int, block_n: int, warps: int, stages: int, tail: bool, per_sm: int, flat: bool
):
    def call(q, k, v, causal):
        assert not causal
        batch, heads, seq_len, head_dim = q.shape
        out = torch.empty_like(q)
        rows = [t.view(-1, head_dim) for t in (q, k, v)]
        descs = [
            TensorDescriptor.from_tensor(t, [b, head_dim])
            for t, b in zip(rows, (block_m, block_n, block_n), strict=True)
        ]
        n_tiles = batch * heads * (seq_len // block_m)
        scale = head_dim**-0.5 * 1.4426950408889634
        _attn_persistent[(min(n_tiles, sm_count(q) * per_sm),)](
            descs[0], rows[0], *descs[1:], out, n_tiles, seq_len, scale, HEAD_DIM=head_dim,
            BLOCK_M=block_m, BLOCK_N=block_n, TAIL=tail, FLAT=flat, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        return out

    return call


def _persistent_name(bm: int, bn: int, w: int, st: int, tail: bool, per_sm: int, flat: bool) -> str:
    return f"{per_sm}/SM{' flat' if flat else ''}{' +tail' if tail else ''} {bm}x{bn} w{w} s{st}"


def with_tiles(module, tiles):
    """The solution's `attention` with `_config` fixed to `tiles` for the call."""

    def call(q, k, v, causal):
        chosen = module._config
        module._config = lambda *args: module.Config(*tiles)
        try:
            return module.attention(q, k, v, causal=causal)
        finally:
            module._config = chosen

    return call


def timed(shape: dict, op, module) -> list[dict]:
    found = {"SDPA": op.eager, "solution": module.attention}
    found |= {"{}x{} w{} s{}".format(*tiles): with_tiles(module, tiles) for tiles in TILES}
    if not shape["causal"]:
        found |= {_persistent_name(*config): persistent(*config) for config in PERSISTENT}
    found["solution again"] = module.attention  # last in the rotation: does the place matter?
    rows = in_turn(op, shape, DTYPE, found)
    flops = op.flop_count(shape)
    sdpa = rows[0]["graph_us"]
    for row in rows:
        us = row["graph_us"]
        row["of_sdpa"] = sdpa / us if us and sdpa else None
        row["tflops"] = flops / us / 1e6 if us else None
    print_rows(
        f"attention s={shape['s']:<4} causal={shape['causal']}",
        rows,
        lambda row: f"{row['graph_us']:9.1f} µs {row['of_sdpa']:6.1%} of SDPA",
    )
    return rows


def check() -> int:
    from tutor.harness import interpreter

    interpreter.install()  # the plain interpreter multiplies bf16 tiles as raw integers
    module = load_solution("m3_attention")
    q, k, v = (torch.randn(1, 2, 40, 16) for _ in range(3))
    ok = True
    for causal in (False, True):
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for tiles in ((32, 16, 1, 1), (16, 16, 1, 1)):
            got = with_tiles(module, tiles)(q, k, v, causal)
            ok = ok and torch.allclose(got, want, atol=1e-4)
    # S = 96: with 32 x 16 tiles the masked tail is empty; with 32 x 64 it holds keys 64-95
    q, k, v = (torch.randn(1, 2, 96, 16, dtype=torch.bfloat16) for _ in range(3))
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v).float()
    for block_n, tail, per_sm, flat in (
        (16, False, 1, False),
        (16, True, 1, False),
        (16, True, 2, False),
        (64, True, 1, False),
        (16, False, 1, True),
        (32, False, 2, True),
    ):
        got = persistent(32, block_n, 1, 1, tail, per_sm, flat)(q, k, v, False).float()
        ok = ok and torch.allclose(got, want, atol=2e-2)
    print("every tile config computes attention" if ok else "a tile config is wrong")
    return 0 if ok else 1


def measure() -> list[dict]:
    op = load_recipes(ROOT / "drills" / "bench" / "m3.py")["attention"]
    module = load_solution("m3_attention")
    return [row for shape in SHAPES for row in timed(shape, op, module)]


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv, __doc__, check, measure, "probe-attention-tiles.json", "the outputs, CPU"
    )


if __name__ == "__main__":
    raise SystemExit(main())
