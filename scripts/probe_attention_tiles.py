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

Beside them, a lean persistent kernel: one or two programs an SM walking the (query block,
head) tiles, with one unmasked key loop and, when causal, the diagonal's masked blocks; nothing
else. "+tail" adds the second, masked key loop the solution then kept for a partial last block:
empty at these shapes, it cost 6% (H100, four runs: 148.8-155.2 -> 157.3-164.5 us at S = 1024,
2001.7-2012.3 -> 2131.7-2156.1 at S = 4096), and the solution now compiles it only when it can
have work. Non-causal, the lean kernel stays up to 3.5% ahead of the solution at S = 4096 and
1-2% at S = 1024. Causal, it takes the tiles in one of two orders: each head's query blocks
longest first (the solution's order: a head's keys stay in L2 while its blocks run), or every
head's longest block before any shorter one (the longest work first across the whole grid).
Both lost to the solution's grid of one program a tile (H100, 2026-12-06: 83% and 68-71% of
SDPA at S = 4096 causal, the solution 89-90%): a program striding over tiles of unequal length
gets an unequal share, where the hardware hands each next tile to whichever SM is free.

Measured and dropped (H100, 2026-12-06, docs/reports/2026-12-06/probes-flat-attention-m2.md;
the code is at commit 8e5edfd): the tile and key loops flattened into one pipeline
(`tl.range(..., flatten=True)`, what took m1 to cuBLAS): 30-90% slower, and wrong on the GPU;
the next key block's q @ k^T issued before this block's softmax: 18-36% slower. Storing the
output through a descriptor does not fit: 32 KiB more shared memory than 128 x 128 tiles on 3
stages leave (262,200 bytes of 232,448).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from tune_sweep import (  # noqa: E402 - scripts is on the path
    in_turn,
    load_module,
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
# (BLOCK_M, BLOCK_N, num_warps, num_stages). 256 rows on 16 warps: four warpgroups of 64 rows,
# each with its own wgmma and softmax, that the SM's schedulers can interleave (what
# FlashAttention-3 arranges by hand with two); Triton 3.9 compiles it for sm_90 in 125-128
# registers (all 65,536 of the SM's), no stack, 131,104 bytes of shared memory on 2 stages and
# 163,896 on 3. 256 x 128 spills (1.2 KB). 64 x 128 on 4 warps: 188-205 registers, no stack.
# 128 x 64 on one warpgroup and 2 stages: 255 registers (16 bytes of stack causal), 98,336 bytes,
# so two programs fit an SM and the schedulers can run one's softmax beside the other's
# multiplies, FlashAttention-3's ping-pong between two programs instead of two warpgroups.
TILES = ((64, 64, 4, 3), (128, 128, 8, 3))  # the solution's two, beside the lean kernels
# Measured and dropped (docs/reports/2026-12-06/probes-attention-ws-flex.md, run 1, H200):
# 128 x 64 on 8 warps (3 stages) and on 4 (2 stages: 255 registers and 98,336 bytes, two
# programs an SM), 64 x 128 on 4 warps, and 256 x 64 on 16 warps (four warpgroups; 2 and 3
# stages): 58-87% of SDPA against the solution's 75-93%.


class Lean(NamedTuple):
    """A lean persistent kernel's launch: see _attn_persistent."""

    block_m: int
    block_n: int
    warps: int
    stages: int
    tail: bool = False  # the masked key loop compiled in, empty at these shapes
    per_sm: int | None = 1  # programs an SM; None: one program a tile, as the solution
    order: str = ""  # causal: BY_HEAD or LONGEST_FIRST; "" is non-causal
    masked_store: bool = False  # the solution's store: a run-time row stride, rows past S masked
    maxnreg: int | None = None  # registers a thread may use at most (so more programs fit an SM)

    @property
    def name(self) -> str:
        words = " +tail" if self.tail else ""
        words += " +masked store" if self.masked_store else ""
        words += f" causal {self.order}" if self.order else ""
        words += f" maxnreg {self.maxnreg}" if self.maxnreg else ""
        grid = "a tile each" if self.per_sm is None else f"{self.per_sm}/SM"
        return f"{grid}{words} {self.block_m}x{self.block_n} w{self.warps} s{self.stages}"


BY_HEAD = "by head"  # each head's query blocks longest first, heads one after another
LONGEST_FIRST = "longest first"  # every head's last query block, then every head's one before

# Measured and dropped (H100, 2026-12-06, run 5 of docs/reports/2026-12-06/probes-attention-
# ws-flex.md; the code is at commit e13326c): two programs an SM, 128 x 64 tiles on 8 warps and
# 2 stages with registers capped at 128 (maxnreg) so that two fit, one's q load and output
# store beside the other's key loop: 160.2 us at S = 1024 and 2189.3 at S = 4096 against 150.1
# and 2017.6 for the lean kernel at 128 x 128, one program a tile (kept below as the yardstick).
PERSISTENT = (Lean(128, 128, 8, 3, per_sm=None),)
CAUSAL_PERSISTENT = (Lean(64, 64, 4, 3, per_sm=None, order=BY_HEAD),)

# The solution with one line changed, beside it: the lean kernel stays 2-3% ahead at S = 4096
# one program a tile and with the solution's store (run 1), and what is left between them is
# mostly integer work. The solution computes each head's first row in int64 (for its pointer
# path's offsets) and truncates it to int32 at every descriptor load; here, computed in int32
# as the lean kernel does (TMA coordinates are int32 anyway). H100, 2026-12-06 (run 6 of
# docs/reports/2026-12-06/probes-attention-ws-flex.md): no change, 2074.4 against 2074.3 us at
# S = 4096 (the lean kernel 2028.5), 158.5 against 157.9 at S = 1024.
SOLUTION_EDITS = {
    "solution, int32 rows": (
        "row0 = batch_head * seq_len",
        "row0 = tl.program_id(1) * seq_len",
    ),
}


def edited_solutions(folder: Path) -> dict:
    """Each of SOLUTION_EDITS applied to the solution, loaded as a module of its own."""
    text = (ROOT / "drills" / "solutions" / "m3_attention.py").read_text(encoding="utf-8")
    found = {}
    for number, (name, (old, new)) in enumerate(SOLUTION_EDITS.items()):
        assert text.count(old) == 1, f"{name}: the line to change is not in the solution once"
        path = folder / f"m3_attention_edit_{number}.py"
        path.write_text(text.replace(old, new), encoding="utf-8")
        found[name] = load_module(path)
    return found


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
            qk = tl.where(inside[None, :], qk, float("-inf"))  # -inf stays -inf once scaled
        acc, l_i, m_i = _fold_block(acc, l_i, m_i, qk, v, qk_scale)
    return acc, l_i, m_i


@triton.jit
def _fold_block(acc, l_i, m_i, qk, v, qk_scale):
    """One key block's scores `qk` (unscaled; -inf where masked) and values `v` folded into the
    online softmax."""
    m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
    p = tl.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, axis=1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def _fold_diagonal(acc, l_i, m_i, q, k_desc, v_desc, row0, start_m, qk_scale,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """The key blocks beside query block `start_m` on the diagonal, key j > query i hidden."""
    rows = start_m + tl.arange(0, BLOCK_M)
    for start_n in range(start_m, start_m + BLOCK_M, BLOCK_N):
        k = tl.trans(k_desc.load([row0 + start_n, 0]))
        v = v_desc.load([row0 + start_n, 0])
        qk = tl.dot(q, k)
        visible = rows[:, None] >= (start_n + tl.arange(0, BLOCK_N))[None, :]
        qk = tl.where(visible, qk, float("-inf"))  # key start_m is seen by every row: max finite
        acc, l_i, m_i = _fold_block(acc, l_i, m_i, qk, v, qk_scale)
    return acc, l_i, m_i


@triton.jit
def _attn_persistent(
    q_desc,
    k_desc,
    v_desc,
    o_ptr,
    o_row_stride,
    n_tiles,
    seq_len,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    TAIL: tl.constexpr,
    CAUSAL: tl.constexpr,
    LONGEST_FIRST: tl.constexpr,
    MASKED_STORE: tl.constexpr,
):
    """Attention with S a multiple of both blocks: a few programs an SM walk the (query block,
    head) tiles. TAIL adds the solution's second, masked key loop from the last whole block to
    S: empty at these shapes, but the compiler cannot know it, as in the solution before it
    compiled that loop only when S leaves a partial block. CAUSAL folds the keys before the
    query block unmasked and the diagonal's blocks masked; the tiles are taken by head, each
    head's longest first, or with LONGEST_FIRST every head's longest before any shorter.
    MASKED_STORE stores as the solution does: rows a run-time stride apart, those past S masked
    (none are, at these shapes)."""
    blocks_m = seq_len // BLOCK_M
    heads = n_tiles // blocks_m
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        if LONGEST_FIRST:
            head = tile % heads
            block = blocks_m - 1 - tile // heads
        else:
            head = tile // blocks_m
            block = tile % blocks_m
            if CAUSAL:
                block = blocks_m - 1 - block
        row0 = head * seq_len  # this head's first row in [B * H * S, D]
        start_m = block * BLOCK_M
        q = q_desc.load([row0 + start_m, 0])
        m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        unmasked_end = start_m if CAUSAL else (seq_len // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _fold_keys(
            acc, l_i, m_i, q, k_desc, v_desc, row0, 0, unmasked_end, seq_len, qk_scale,
            MASKED=False, BLOCK_N=BLOCK_N,
        )  # fmt: skip
        if CAUSAL:
            acc, l_i, m_i = _fold_diagonal(
                acc, l_i, m_i, q, k_desc, v_desc, row0, start_m, qk_scale,
                BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            )  # fmt: skip
        elif TAIL:
            acc, l_i, m_i = _fold_keys(
                acc, l_i, m_i, q, k_desc, v_desc, row0, unmasked_end, seq_len, seq_len,
                qk_scale, MASKED=True, BLOCK_N=BLOCK_N,
            )  # fmt: skip
        out = acc / l_i[:, None]
        o_rows = (row0 + start_m + offs_m).to(tl.int64)
        if MASKED_STORE:
            o_ptrs = o_ptr + o_rows[:, None] * o_row_stride + offs_d[None, :]
            tl.store(o_ptrs, out.to(q.dtype), mask=(start_m + offs_m)[:, None] < seq_len)
        else:
            tl.store(o_ptr + o_rows[:, None] * HEAD_DIM + offs_d[None, :], out.to(q.dtype))


def persistent(lean: Lean):
    def call(q, k, v, causal):
        assert bool(causal) == bool(lean.order)
        batch, heads, seq_len, head_dim = q.shape
        out = torch.empty_like(q)
        rows = [t.view(-1, head_dim) for t in (q, k, v)]
        descs = [
            TensorDescriptor.from_tensor(t, [b, head_dim])
            for t, b in zip(rows, (lean.block_m, lean.block_n, lean.block_n), strict=True)
        ]
        n_tiles = batch * heads * (seq_len // lean.block_m)
        scale = head_dim**-0.5 * 1.4426950408889634
        programs = n_tiles if lean.per_sm is None else min(n_tiles, sm_count(q) * lean.per_sm)
        _attn_persistent[(programs,)](
            *descs, out, out.stride(2), n_tiles, seq_len, scale, HEAD_DIM=head_dim,
            BLOCK_M=lean.block_m, BLOCK_N=lean.block_n, TAIL=lean.tail, CAUSAL=bool(lean.order),
            LONGEST_FIRST=lean.order == LONGEST_FIRST, MASKED_STORE=lean.masked_store,
            num_warps=lean.warps, num_stages=lean.stages,
            **({"maxnreg": lean.maxnreg} if lean.maxnreg else {}),
        )  # fmt: skip
        return out

    return call


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


def timed(shape: dict, op, module, edits: dict) -> list[dict]:
    found = {"SDPA": op.eager, "solution": module.attention}
    found |= {name: edited.attention for name, edited in edits.items()}
    # causal needs BLOCK_M a multiple of BLOCK_N (the module docstring)
    fit = [t for t in TILES if not shape["causal"] or t[0] % t[1] == 0]
    found |= {"{}x{} w{} s{}".format(*tiles): with_tiles(module, tiles) for tiles in fit}
    leans = CAUSAL_PERSISTENT if shape["causal"] else PERSISTENT
    found |= {lean.name: persistent(lean) for lean in leans}
    found["solution again"] = module.attention  # last in the rotation: does the place matter?
    return against_sdpa(shape, op, found)


def against_sdpa(shape: dict, op, sides: dict) -> list[dict]:
    """`sides` (SDPA first) timed in turn at `shape` (tune_sweep.in_turn), each row with its
    share of SDPA's speed and its TFLOP/s, printed with the reason any side failed. The m3
    probes' common table (this one, probe_attention_ws.py, probe_attention_flex.py)."""
    rows = in_turn(op, shape, DTYPE, sides)
    flops = op.flop_count(shape)
    sdpa = rows[0]["graph_us"]
    for row in rows:
        us = row["graph_us"]
        row["of_sdpa"] = sdpa / us if us and sdpa else None
        row["tflops"] = flops / us / 1e6 if us else None
    print_rows(
        f"attention s={shape['s']:<4} causal={shape['causal']}",
        rows,
        lambda row: (
            f"{row['graph_us']:9.1f} µs {row['of_sdpa']:6.1%} of SDPA {row['tflops']:5.0f} TFLOP/s"
        ),
    )
    for row in rows:
        if row["error"]:
            print(f"  {row['side']}: {row['error']}", flush=True)
    return rows


def check() -> int:
    from tutor.kernels.triton import interpreter

    interpreter.install()  # the plain interpreter multiplies bf16 tiles as raw integers
    module = load_solution("m3_attention")
    q, k, v = (torch.randn(1, 2, 40, 16) for _ in range(3))
    ok = True
    for causal in (False, True):
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for tiles in ((32, 16, 1, 1), (16, 16, 1, 1)):
            got = with_tiles(module, tiles)(q, k, v, causal)
            ok = ok and torch.allclose(got, want, atol=1e-4)
    # S = 96: with 32 x 16 tiles the masked tail is empty; with 32 x 64 it holds keys 64-95.
    # Causal: 3 query blocks of 32 rows, their diagonals in one or two key blocks.
    for seq_len, lean in (
        (96, Lean(32, 16, 1, 1)),
        (96, Lean(32, 16, 1, 1, tail=True)),
        (96, Lean(32, 16, 1, 1, tail=True, per_sm=2)),
        (96, Lean(32, 64, 1, 1, tail=True)),
        (96, Lean(32, 16, 1, 1, per_sm=None, masked_store=True)),
        (96, Lean(32, 32, 1, 1, per_sm=None)),
        (96, Lean(32, 32, 1, 1, order=BY_HEAD)),
        (96, Lean(32, 16, 1, 1, per_sm=2, order=BY_HEAD)),
        (96, Lean(32, 32, 1, 1, order=LONGEST_FIRST)),
        (96, Lean(32, 16, 1, 1, per_sm=2, order=LONGEST_FIRST)),
        (96, Lean(32, 16, 1, 1, per_sm=None, maxnreg=128)),
    ):
        q, k, v = (torch.randn(1, 2, seq_len, 16, dtype=torch.bfloat16) for _ in range(3))
        causal = bool(lean.order)
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        got = persistent(lean)(q, k, v, causal).float()
        ok = ok and torch.allclose(got, want.float(), atol=2e-2)
    with tempfile.TemporaryDirectory() as folder:
        for edited in edited_solutions(Path(folder)).values():
            for causal in (False, True):
                q, k, v = (torch.randn(1, 2, 96, 16, dtype=torch.bfloat16) for _ in range(3))
                want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                got = edited.attention(q, k, v, causal=causal).float()
                ok = ok and torch.allclose(got, want.float(), atol=2e-2)
    print("every tile config computes attention" if ok else "a tile config is wrong")
    return 0 if ok else 1


def measure() -> list[dict]:
    op = load_recipes(ROOT / "drills" / "bench" / "m3.py")["attention"]
    module = load_solution("m3_attention")
    with tempfile.TemporaryDirectory() as folder:
        edits = edited_solutions(Path(folder))
        return [row for shape in SHAPES for row in timed(shape, op, module, edits)]


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv, __doc__, check, measure, "probe-attention-tiles.json", "the outputs, CPU"
    )


if __name__ == "__main__":
    raise SystemExit(main())
