#!/usr/bin/env python3
"""f5's launch shapes, and a one-read kernel for rows that fit in one block (issue 27: f5 at
V = 32000 ran at 73% of copy bandwidth on the H100, 83% at V = 128256).

    python scripts/probe_cross_entropy.py [--out DIR]       # GPU: a table, and JSON in DIR
    TRITON_INTERPRET=1 python scripts/probe_cross_entropy.py --check    # CPU: outputs only

At V = 32000 the solution's one block of 32768 lanes holds the whole row, yet its two passes
still load it twice, and at 32 warps a program takes the SM's registers, so one row at a time
runs per SM with its loads, reductions and stores in series. The sides:

- the solution as called;
- its kernel at other blocks and warps (more, smaller programs per SM; pass 2 from the L2);
- a one-read kernel: the row loaded once, max, sum and gradient from registers (rows up to
  one block only, as t4's one-pass path).

Every side's loss and gradient are checked against torch eager first; then all are timed in
CUDA graphs in turn (tutor.bench.timing.graphs_us, inputs rotated past the L2) and per call
with do_bench. Share: the recipe's fewest bytes at copy bandwidth, measured in this process.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from tune_sweep import load_solution, save_json  # noqa: E402

from tutor.bench.recipe import load_recipes  # noqa: E402
from tutor.bench.timing import _copy_gbps  # noqa: E402
from tutor.dev.liger import case_rows  # noqa: E402

SHAPES = ({"t": 4096, "v": 32000}, {"t": 4096, "v": 128256})
CHECK_SHAPES = ({"t": 64, "v": 1000}, {"t": 4, "v": 5000})  # 64 rows: some ignored
# (BLOCK_V, num_warps) of the two-pass kernel, besides the solution's own choice
TWO_PASS = ((4096, 4), (4096, 8), (8192, 8), (8192, 16), (16384, 16), (32768, 16))
ONE_READ_WARPS = (16, 32)


@triton.jit
def _one_read_kernel(
    logits_ptr,
    target_ptr,
    dlogits_ptr,
    loss_rows_ptr,
    n_valid_ptr,
    logits_row_stride,
    dlogits_row_stride,
    n_cols,
    ignore_index,
    BLOCK_V: tl.constexpr,
):
    """The whole row in one block (BLOCK_V >= n_cols): one load, the rest from registers."""
    row_idx = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK_V)
    mask = offsets < n_cols
    dlogits_row = dlogits_ptr + row_idx * dlogits_row_stride
    target = tl.load(target_ptr + row_idx)
    if target == ignore_index:
        zeros = tl.zeros((BLOCK_V,), dtype=dlogits_ptr.dtype.element_ty)
        tl.store(dlogits_row + offsets, zeros, mask=mask)
        tl.store(loss_rows_ptr + row_idx, 0.0)
        return
    x = tl.load(
        logits_ptr + row_idx * logits_row_stride + offsets, mask=mask, other=float("-inf")
    ).to(tl.float32)
    row_max = tl.max(x, axis=0)
    exps = tl.exp(x - row_max)
    total = tl.sum(exps, axis=0)
    is_target = offsets == target
    target_logit = tl.sum(tl.where(is_target, x, 0.0), axis=0)  # from registers: no load
    inv_n = 1.0 / tl.load(n_valid_ptr).to(tl.float32)
    tl.store(loss_rows_ptr + row_idx, (row_max + tl.log(total) - target_logit) * inv_n)
    probs = exps / total
    grad = tl.where(is_target, probs - 1.0, probs) * inv_n
    tl.store(dlogits_row + offsets, grad.to(dlogits_ptr.dtype.element_ty), mask=mask)


def _launcher(kernel, block_v: int, num_warps: int):
    """cross_entropy(logits, target, ignore_index) with `kernel` at a fixed launch shape."""

    def cross_entropy(logits, target, ignore_index=-100):
        n_rows, n_cols = logits.shape
        dlogits = torch.empty_like(logits)
        loss_rows = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
        n_valid = (target != ignore_index).sum()
        kernel[(n_rows,)](
            logits,
            target,
            dlogits,
            loss_rows,
            n_valid,
            logits.stride(0),
            dlogits.stride(0),
            n_cols,
            ignore_index,
            BLOCK_V=block_v,
            num_warps=num_warps,
        )
        return loss_rows.sum(), dlogits

    return cross_entropy


def sides(shape: dict, check: bool) -> dict:
    """Every side at `shape`: the solution, its kernel relaunched, and the one-read kernel
    where the row fits a block (blocks cut to the row on the CPU, where shapes are small)."""
    solution = load_solution("f5_cross_entropy")
    found = {"solution": solution.cross_entropy}
    row_block = triton.next_power_of_2(shape["v"])
    for block_v, warps in TWO_PASS:
        block = min(block_v, row_block) if check else block_v
        found[f"two-pass block={block_v} warps={warps}"] = _launcher(
            solution._cross_entropy_kernel, block, warps
        )
    if row_block <= solution.MAX_BLOCK_V:
        for warps in ONE_READ_WARPS:
            found[f"one-read warps={warps}"] = _launcher(_one_read_kernel, row_block, warps)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--check", action="store_true", help="small shapes, outputs only, CPU")
    args = parser.parse_args(argv)
    op = load_recipes(ROOT / "drills" / "bench" / "f5.py")["cross_entropy"]
    gbps = None
    if not args.check:
        if not torch.cuda.is_available():
            print("probe_cross_entropy.py times kernels on a GPU; torch sees none", file=sys.stderr)
            return 2
        gbps = _copy_gbps()
        print(f"{torch.cuda.get_device_name(0)}, copy {gbps:.0f} GB/s", flush=True)
    rows = []
    for shape in CHECK_SHAPES if args.check else SHAPES:
        found = sides(shape, args.check)
        case = f"f5 cross_entropy t={shape['t']} v={shape['v']}"
        rows += case_rows(op, found, tuple(found), shape, case, gbps)
    wrong = [row for row in rows if not row["max_diff"] < 0.05]
    print(f"{len(rows) - len(wrong)} of {len(rows)} outputs match torch eager", flush=True)
    if gbps:
        save_json(
            args.out,
            "probe-cross-entropy.json",
            {
                "device": torch.cuda.get_device_name(0),
                "torch": torch.__version__,
                "triton": triton.__version__,
                "copy_gbps": gbps,
                "rows": rows,
            },
        )
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
