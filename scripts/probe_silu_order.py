#!/usr/bin/env python3
"""Does the order programs take silu_and_mul's blocks in decide its last 4% to torch.compile?

    python scripts/probe_silu_order.py [--out DIR]      # GPU: a table, and JSON in DIR
    TRITON_INTERPRET=1 python scripts/probe_silu_order.py --check    # CPU: the variants' outputs

f3's silu_and_mul (T = 4096, I = 14336, bf16) runs at 96% of copy bandwidth and 1.04x
torch.compile, whose kernel is at the copy's own speed (H100, 2026-12-06). The solution's grid is
(rows, column blocks): the programs launched one after another take the same column block of
successive rows, 57 KB apart, where inductor's one flat axis walks each row from its start.
The variants here are the solution's kernel with only that changed:

- `row-major 1-D`: one axis of rows x column blocks, a row's blocks consecutive, BLOCK 1024
  at 4 warps (the solution's) and 2048 at 8;
- `columns on axis 0`: the 2-D grid with its axes swapped (at most 65535 rows: a probe only).

All in CUDA graphs in turn (tutor.bench.timing.graphs_us), inputs rotated past the L2.
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
from tune_sweep import (  # noqa: E402 - scripts is on the path
    add_bandwidth,
    in_turn,
    load_solution,
    print_rows,
    probe_main,
)

from tutor.bench.recipe import load_recipes  # noqa: E402

DTYPE = "bfloat16"
SHAPES = ({"t": 16, "i": 14336}, {"t": 4096, "i": 14336})


@triton.jit
def _silu_rows_first(x_ptr, out_ptr, d, BLOCK: tl.constexpr, COLUMNS_ON_AXIS_0: tl.constexpr):
    """The solution's arithmetic; which block a program takes is all that differs."""
    if COLUMNS_ON_AXIS_0:
        row = tl.program_id(1).to(tl.int64)
        block = tl.program_id(0)
    else:  # one flat axis, a row's column blocks one after another
        per_row = tl.cdiv(d, BLOCK)
        pid = tl.program_id(0)
        row = (pid // per_row).to(tl.int64)
        block = pid % per_row
    offsets = block * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < d
    x_row = x_ptr + row * 2 * d
    gate = tl.load(x_row + offsets, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_row + d + offsets, mask=mask, other=0.0).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + row * d + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def variant(block: int, warps: int, columns_on_axis_0: bool):
    def call(x):
        d = x.shape[-1] // 2
        rows = x.numel() // (2 * d)
        out = torch.empty((*x.shape[:-1], d), dtype=x.dtype, device=x.device)
        blocks = triton.cdiv(d, block)
        grid = (blocks, rows) if columns_on_axis_0 else (rows * blocks,)
        _silu_rows_first[grid](
            x, out, d, BLOCK=block, COLUMNS_ON_AXIS_0=columns_on_axis_0, num_warps=warps
        )
        return out

    return call


def sides(op) -> dict:
    return {
        "solution": load_solution("f3_fused_norm_act").silu_and_mul,
        "torch.compile": torch.compile(op.eager),
        "row-major 1-D, 1024 w4": variant(1024, 4, False),
        "row-major 1-D, 2048 w8": variant(2048, 8, False),
        "row-major 1-D, 4096 w8": variant(4096, 8, False),
        "columns on axis 0, 1024 w4": variant(1024, 4, True),
    }


def timed(shape: dict, op) -> list[dict]:
    rows = in_turn(op, shape, DTYPE, sides(op))
    add_bandwidth(rows, op.bytes_moved(shape, DTYPE))
    print_rows(
        f"silu_and_mul t={shape['t']:<5}",
        rows,
        lambda row: f"{row['graph_us']:8.2f} µs {row['gb_s']:7.0f} GB/s",
    )
    return rows


def check() -> int:
    x = torch.randn(3, 2 * 40)
    want = torch.nn.functional.silu(x[:, :40]) * x[:, 40:]
    ok = all(torch.allclose(variant(16, 1, axis0)(x), want, atol=1e-5) for axis0 in (False, True))
    print("the variants compute silu_and_mul" if ok else "a variant is wrong")
    return 0 if ok else 1


def measure() -> list[dict]:
    op = load_recipes(ROOT / "drills" / "bench" / "f3.py")["silu_and_mul"]
    return [row for shape in SHAPES for row in timed(shape, op)]


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv, __doc__, check, measure, "probe-silu-order.json", "the variants' outputs, CPU"
    )


if __name__ == "__main__":
    raise SystemExit(main())
