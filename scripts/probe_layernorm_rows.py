#!/usr/bin/env python3
"""What keeps t3's layer_norm 4% behind torch.compile on short rows (4096 x 1000, bf16)?

    python scripts/probe_layernorm_rows.py [--out DIR]    # GPU: a table, and JSON in DIR
    TRITON_INTERPRET=1 python scripts/probe_layernorm_rows.py --check   # CPU: the outputs

The whole report of 2026-12-06 (H100, CUDA graphs in turn) had layer_norm at 6.19 µs against
compile's 5.95, where rms_norm, one reduction fewer, was level (5.86 against 5.92). The
solution takes one row per program on one warp, its two reductions in series. The variants are
its arithmetic with one thing changed (several rows a program: probe_norms.py's
`layer_norm_tile`, which on an H200 on 2026-12-02 was timed alone, not in turn with compile):

- `rows=R warps=W`: R rows per program (a [R, BLOCK_N] tile), so each reduction's shuffles
  serve R rows at once;
- `persistent`: a few programs an SM, each walking rows in a pipelined loop, so the next row's
  load is in flight while this one is reduced and stored (with one row a program, the card
  holds every row at once: all loads first, then all stores);
- `no stats`: the mean and rstd not stored, and `torch.compile, with mean and rstd`: compile
  of torch.native_layer_norm, which returns them as the solution does, where compile of
  F.layer_norm's y alone leaves them out: what the two stores per row cost on each side;
- `one sweep`: the mean and the mean of squares summed from the same loaded row, var =
  E[x^2] - mean^2, so the two reductions do not wait on each other (for the numbers only: it
  loses precision when the mean dwarfs the spread, which is why the lesson subtracts first).

All in CUDA graphs in turn with the solution and torch.compile (tutor.bench.timing.graphs_us),
inputs rotated past the L2.
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
from probe_norms import layer_norm_tile  # noqa: E402 - the scripts folder is on the path
from tune_sweep import (  # noqa: E402
    add_bandwidth,
    in_turn,
    load_solution,
    print_rows,
    probe_main,
    sm_count,
)

from tutor.bench.recipe import load_recipes  # noqa: E402

DTYPE = "bfloat16"
SHAPE = {"m": 4096, "n": 1000}
ROWS_WARPS = ((1, 1), (2, 1), (2, 2), (4, 2))


@triton.jit
def _layer_norm_loop(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    n_rows,
    row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps,
    BLOCK_N: tl.constexpr,
    STAGES: tl.constexpr,
):
    """Persistent: each program walks rows pid, pid + programs, ...; the loop is pipelined, so
    the next row's load is in flight while this row is reduced and stored."""
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        offsets = row * row_stride + cols  # int32: the probe's 4096 x 1000 is far from 2**31
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        xc = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
        y = xc * rstd * w + b
        tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)


def persistent(per_sm: int, warps: int, stages: int):
    def call(x, weight, bias, eps):
        m, n = x.shape
        y = torch.empty_like(x)
        mean = torch.empty(m, dtype=torch.float32, device=x.device)
        rstd = torch.empty_like(mean)
        _layer_norm_loop[(min(m, sm_count(x) * per_sm),)](
            x, weight, bias, y, mean, rstd, m, x.stride(0), n, eps,
            BLOCK_N=triton.next_power_of_2(n), STAGES=stages, num_warps=warps,
        )  # fmt: skip
        return y

    return call


def variant(rows: int, warps: int, one_sweep: bool = False, stats: bool = True):
    def call(x, weight, bias, eps):
        m, n = x.shape
        y = torch.empty_like(x)
        mean = torch.empty(m, dtype=torch.float32, device=x.device)
        rstd = torch.empty_like(mean)
        layer_norm_tile[(triton.cdiv(m, rows),)](
            x, weight, bias, y, mean, rstd, m, x.stride(0), n, eps,
            ROWS=rows, BLOCK_N=triton.next_power_of_2(n), EARLY=False, STATS=stats,
            ONE_SWEEP=one_sweep, num_warps=warps,
        )  # fmt: skip
        return y

    return call


def layer_norm_y(x, weight, bias, eps):
    """y alone (the bench's compile column until 2026-12-06): compile leaves the statistics out."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def sides(op) -> dict:
    found = {
        "solution": load_solution("t3_layernorm").layer_norm,
        "torch.compile": torch.compile(layer_norm_y),
        # the bench's eager since 2026-12-06: y, mean and rstd, as the solution returns them
        "torch.compile, with mean and rstd": torch.compile(op.eager),
    }
    found |= {f"rows={r} warps={w}": variant(r, w) for r, w in ROWS_WARPS}
    found |= {f"rows={r} warps=1, no stats": variant(r, 1, stats=False) for r in (1, 2)}
    found |= {"one sweep, rows=2 warps=1": variant(2, 1, True)}
    found |= {
        f"persistent {per_sm}/SM warps={w} stages={st}": persistent(per_sm, w, st)
        for per_sm, w, st in ((16, 1, 2), (16, 1, 3))
    }
    return found


def measure() -> list[dict]:
    op = load_recipes(ROOT / "drills" / "bench" / "t3.py")["layer_norm"]
    rows = in_turn(op, SHAPE, DTYPE, sides(op))
    add_bandwidth(rows, op.bytes_moved(SHAPE, DTYPE))
    print_rows(
        "layer_norm 4096x1000",
        rows,
        lambda row: f"{row['graph_us']:7.2f} µs {row['gb_s']:6.0f} GB/s",
    )
    return rows


def check() -> int:
    x = torch.randn(5, 40) + 0.5
    w, b = torch.randn(40), torch.randn(40)
    want = torch.nn.functional.layer_norm(x, (40,), w, b, 1e-5)
    ok = all(
        torch.allclose(variant(r, 1, sweep)(x, w, b, 1e-5), want, atol=1e-4)
        for r in (1, 2, 4)
        for sweep in (False, True)
    ) and torch.allclose(persistent(1, 1, 2)(x, w, b, 1e-5), want, atol=1e-4)
    print("the variants compute layer_norm" if ok else "a variant is wrong")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv, __doc__, check, measure, "probe-layernorm-rows.json", "the variants' outputs, CPU"
    )


if __name__ == "__main__":
    raise SystemExit(main())
