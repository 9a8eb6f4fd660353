"""Liger-Kernel beside f5's and t4's reference solutions, same process, same inputs (issue 27:
"f5 ahead of Liger-Kernel's cross-entropy at V = 128256"; t4's long rows ahead of the best of
eager, torch.compile and Liger).

    # here, once: echo /.whl/ >> .git/info/exclude
    #   python3 -m pip download --no-deps --only-binary=:all: -d .whl liger-kernel==0.8.5
    # on the GPU machine (carry .whl):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/liger_kernel-*.whl
    PYTHONPATH=/tmp/site python -m tutor.dev.liger [--out DIR] [--drills f5,t4]
        [--no-eager]        # `tutor dev report` runs it so, after its benches (they time eager)
    TRITON_INTERPRET=1 PYTHONPATH=/tmp/site python -m tutor.dev.liger --check   # CPU

f5: Liger computes the loss and writes the gradient over the logits in one kernel, as the
solution computes both (into a new tensor); it reads the number of counted rows back to the
host (`.item()`), so it cannot be captured in a CUDA graph, and every side is timed per call
with `do_bench` (the L2 flushed before each call, as the bench does), the solution and eager
also in a graph. t4: all three in CUDA graphs, timed in turn (tutor.bench.timing.graphs_us).
Each side's output is checked against torch eager before it is timed (`--check`: that alone,
at small shapes, on the CPU interpreter). % copy is the recipe's bytes at the card's copy
bandwidth, measured in the same process.
"""

# ruff: noqa: B023 - each lambda is timed at once, inside the loop that defines it
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import torch

from tutor.bench.recipe import IN_PLACE_SETS, clone_inputs, load_recipes, max_excess
from tutor.bench.timing import (
    _copy_gbps,
    graph_input_sets,
    graphs_us,
    l2_bytes,
    median_ms,
)
from tutor.course.paths import CoursePaths, find_root

DTYPE = "bfloat16"


def _course() -> CoursePaths:
    return CoursePaths(find_root())


def _solution(spec: dict):
    """The drill's reference solution as a module of its own."""
    path = _course().solution(f"{spec['solution']}.py")
    loaded = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module


def _liger_cross_entropy(logits, target, ignore_index):
    """Liger's forward with the gradient: (mean loss, the logits written over with it)."""
    from liger_kernel.ops.cross_entropy import cross_entropy_forward

    logits.requires_grad_(True)  # Liger writes the gradient only for an input that wants one
    loss, _, _, _, grad = cross_entropy_forward(
        logits, target, None, ignore_index, 0.0, 0.0, "mean", None, False
    )
    return loss, grad.detach()


def _liger_softmax(x):
    from liger_kernel.ops.softmax import LigerSoftmaxFunction

    return LigerSoftmaxFunction.apply(x)


def _pct(nbytes: int, us: float | None, gbps: float | None) -> float | None:
    return None if not us or not gbps else 100.0 * nbytes / (us * 1e-6) / (gbps * 1e9)


def _row(case: str, side: str, us: float | None, graph: float | None, nbytes, gbps, diff):
    row = {
        "case": case,
        "side": side,
        "do_bench_us": us,
        "graph_us": graph,
        "pct_copy_do_bench": _pct(nbytes, us, gbps),
        "pct_copy_graph": _pct(nbytes, graph, gbps),
        "max_diff": diff,
    }
    shown = " ".join(
        f"{label} {value:9.2f} µs ({pct:5.1f}%)"
        for label, value, pct in (
            ("do_bench", us, row["pct_copy_do_bench"]),
            ("graph", graph, row["pct_copy_graph"]),
        )
        if value
    )
    print(f"{case:<34} {side:<13} {shown}  max diff {diff:.3g}", flush=True)
    return row


def _drills() -> list[dict]:
    """What each drill sets beside Liger: its recipe, solution, shapes, and the sides that a
    CUDA graph can hold."""
    return [
        {
            "drill": "f5",
            "function": "cross_entropy",
            "solution": "f5_cross_entropy",
            "liger": _liger_cross_entropy,
            "shapes": ({"t": 4096, "v": 128256}, {"t": 4096, "v": 32000}),
            "check_shapes": ({"t": 16, "v": 5000},),
            # Liger reads a count back to the host (.item()): no CUDA graph can hold it
            "graphed": ("eager", "solution"),
        },
        {
            "drill": "t4",
            "function": "softmax_online",
            "solution": "t4_softmax_online",
            "liger": _liger_softmax,
            "shapes": ({"m": 1024, "n": 65536}, {"m": 4096, "n": 8192}, {"m": 4096, "n": 2048}),
            "check_shapes": ({"m": 2, "n": 65536}, {"m": 8, "n": 1000}),
            "graphed": ("eager", "solution", "Liger-Kernel"),
        },
    ]


def drill_rows(spec: dict, gbps: float | None, eager: bool = True) -> list[dict]:
    """Every side of one drill at each of its shapes (its small ones with no `gbps`); torch
    eager's side left out with `eager` False (gpu_report's bench has timed it already)."""
    op = load_recipes(_course().bench_recipe(spec["drill"]))[spec["function"]]
    sides = {
        "eager": op.eager,
        "solution": getattr(_solution(spec), spec["function"]),
        "Liger-Kernel": spec["liger"],
    }
    if not eager:
        del sides["eager"]
    graphed = tuple(side for side in spec["graphed"] if side in sides)
    rows = []
    for shape in spec["shapes"] if gbps else spec["check_shapes"]:
        sizes = " ".join(f"{k}={v}" for k, v in shape.items())
        case = f"{spec['drill']} {spec['function']} {sizes}"
        rows += case_rows(op, sides, graphed, shape, case, gbps)
    return rows


def case_rows(op, sides: dict, graphed: tuple, shape: dict, case: str, gbps: float | None):
    """Every side at one shape: the `graphed` ones in CUDA graphs, timed in turn; then each
    checked against eager and timed per call with do_bench (over copies of the inputs, since
    Liger's cross-entropy writes over its logits). With no `gbps` (--check), on the CPU: the
    check alone."""
    device = "cuda" if gbps else "cpu"
    nbytes = op.bytes_moved(shape, DTYPE)
    base = op.inputs(shape, DTYPE, device)
    fresh = clone_inputs(base)
    expected = op.results(fresh, op.eager(*fresh))
    graph_times, failed = {}, {}
    if gbps:
        count = graph_input_sets(nbytes, l2_bytes())
        rotated = [clone_inputs(base) for _ in range(count)]
        graph_times, failed = graphs_us(
            {side: (lambda k, fn=sides[side]: fn(*rotated[k % count])) for side in graphed}
        )
    rows = []
    for side, fn in sides.items():
        fresh = clone_inputs(base)
        diff, _ = max_excess(op.results(fresh, fn(*fresh)), expected, DTYPE)
        us = None
        if gbps:
            sets = [clone_inputs(base) for _ in range(IN_PLACE_SETS)]
            turn = iter(range(1 << 62))
            us = median_ms(lambda: fn(*sets[next(turn) % len(sets)])) * 1000.0
        rows.append(_row(case, side, us, graph_times.get(side), nbytes, gbps, diff))
        if side in failed:
            print(f"  {side}: no CUDA graph ({str(failed[side]).splitlines()[0][:120]})")
    if gbps:
        torch.cuda.empty_cache()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tutor.dev.liger", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--out", default=None)
    parser.add_argument("--check", action="store_true", help="small shapes, outputs only, CPU")
    parser.add_argument("--drills", default="f5,t4", help="comma-separated: f5, t4 or both")
    parser.add_argument("--no-eager", action="store_true", help="leave torch eager's side out")
    args = parser.parse_args(argv)
    specs = [spec for spec in _drills() if spec["drill"] in args.drills.split(",")]
    try:
        import liger_kernel
    except ImportError:
        print("liger_kernel is not installed (see this script's docstring)", file=sys.stderr)
        return 2
    if args.check:
        rows = [row for spec in specs for row in drill_rows(spec, None, not args.no_eager)]
        wrong = [row for row in rows if not row["max_diff"] < 0.05]
        print(f"{len(rows) - len(wrong)} of {len(rows)} outputs match torch eager")
        return 1 if wrong else 0
    if not torch.cuda.is_available():
        print("tutor.dev.liger times kernels on a GPU; torch sees none", file=sys.stderr)
        return 2
    gbps = _copy_gbps()
    print(f"{torch.cuda.get_device_name(0)}, copy {gbps:.0f} GB/s", flush=True)
    rows = [row for spec in specs for row in drill_rows(spec, gbps, not args.no_eager)]
    result = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "liger_kernel": getattr(liger_kernel, "__version__", "0.8.5"),
        "copy_gbps": gbps,
        "rows": rows,
    }
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "probe-liger.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
