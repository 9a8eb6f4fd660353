"""Time torch's own version of a drill function (eager or torch.compile) in a process of its own.

    python -m tutor.bench.isolated --recipe drills/bench/t3.py --function layer_norm \\
        --shape '{"m": 4096, "n": 1000}' --dtype bfloat16 --mode compile --out row.json [--graph]
        [--beside drills/solutions/t3_layernorm.py]

torch.compile's kernels depend on what the process compiled before: after a recompile it
switches to dynamic shapes, and earlier compiles and autotuning share caches. A column that
compares a learner's kernel with torch.compile is only as good as that set-up, so every shape
is compiled here in a fresh process, once, with `dynamic=False`, warmed up, then timed with the
same do_bench median as the bench (and in a CUDA graph with `--graph`, its inputs rotated over
as many copies as the bench's own graph times, so that neither reads its inputs from the L2).
The bench child runs this for its torch.compile column, and `tutor dev report` runs it
again for eager and compile as an independent check of the bench's columns.

`--beside FILE` times that file's version of the function in the same CUDA-graph rotation
(tutor.bench.timing.graphs_us: in turn, after a warm-up, on the same inputs). The bench passes
the reference solution: a card at its power limit runs the graph timed alone in a fresh process
faster than the same graph timed in turn with others (m1's cuBLAS call: 191.9 µs alone here,
198.4 in turn in the bench, H100, 2026-12-05), so "as fast as torch.compile" is judged on the
two timed side by side here, not on numbers from two processes.

`--sibling FILE` times a Triton file's version of the function in the same rotation too: for a
CUDA C++ drill, the Triton drill that computes the same thing (the recipe's `sibling`), so the
reference beside it is judged against it at one clock.

Writes {"per_call_us", "graph_us", "beside_graph_us", "sibling_graph_us", "compile_s",
"max_diff", "error"} as JSON to --out ("beside_error", "sibling_error" too where that file could
not be loaded or timed): the times as the bench record names them (tutor.bench.record),
`beside_graph_us` the file beside's graph time.

`--warm-only` compiles and checks without timing: torch.compile's caches (FX graph,
autotuning, Triton kernels) live on disk, so `tutor dev report` compiles every case this way
in parallel while the card is busy with untimed work, and the timed fresh processes later find
their kernels built (a fresh process then still starts from nothing in memory: no earlier
graph, no recompile).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from tutor.bench.child import load_module, short_error

MODES = ("eager", "compile")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutor.bench.isolated", description=__doc__)
    parser.add_argument("--recipe", required=True)
    parser.add_argument("--function", required=True)
    parser.add_argument("--shape", required=True, help="the bench case's shape, as JSON")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--graph", action="store_true", help="also time CUDA-graph replay")
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="compile and run once, time nothing: fills the compile caches for a later run",
    )
    parser.add_argument(
        "--beside", default=None, help="a .py file whose function is timed in turn (with --graph)"
    )
    parser.add_argument("--language", default="triton", help="the --beside file's language")
    parser.add_argument(
        "--sibling", default=None, help="a Triton .py file whose function is timed in turn too"
    )
    parser.add_argument("--host", default=None, help="the drill's host code, for CUDA C++")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    row: dict[str, Any] = {
        "per_call_us": None,
        "graph_us": None,
        "compile_s": None,
        "max_diff": None,
        "error": "",
    }
    try:
        _measure(args, row)
    except Exception as exc:  # noqa: BLE001 - reported in the JSON, never a traceback
        row["error"] = short_error(exc)
    Path(args.out).write_text(json.dumps(row), encoding="utf-8")
    return 0 if row["per_call_us"] is not None or (args.warm_only and not row["error"]) else 1


def _measure(args: argparse.Namespace, row: dict[str, Any]) -> None:
    import torch

    from tutor.bench.recipe import IN_PLACE_SETS, clone_inputs, load_recipes, max_excess
    from tutor.bench.timing import graph_input_sets, graphs_us, l2_bytes, median_ms

    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no GPU")
    recipe = load_recipes(Path(args.recipe))[args.function]
    shape = json.loads(args.shape)
    with torch.no_grad():
        base = recipe.inputs(shape, args.dtype, "cuda")
        fresh = clone_inputs(base)
        expected = recipe.results(fresh, recipe.eager(*fresh))
        fn = recipe.eager
        if args.mode == "compile":
            fn = recipe.compiled_fn()
        started = time.monotonic()
        fresh = clone_inputs(base)
        returned = fn(*fresh)  # compiles, for torch.compile
        torch.cuda.synchronize()
        row["compile_s"] = round(time.monotonic() - started, 1) if args.mode == "compile" else None
        diff, _ = max_excess(recipe.results(fresh, returned), expected, args.dtype)
        row["max_diff"] = diff if math.isfinite(diff) else None
        if args.warm_only:
            return
        sets = [clone_inputs(base) for _ in range(IN_PLACE_SETS if recipe.in_place else 1)]
        counter = iter(range(1 << 62))
        row["per_call_us"] = median_ms(lambda: fn(*sets[next(counter) % len(sets)])) * 1000.0
        if args.graph:
            # as many input sets as the bench's own graph times rotate over (past the L2)
            count = graph_input_sets(recipe.bytes_moved(shape, args.dtype), l2_bytes())
            rotated = [clone_inputs(base) for _ in range(count)]
            calls = {args.mode: lambda k: fn(*rotated[k % count])}
            # the Triton sibling first: loading the file beside makes its language the current
            others = {"sibling": (args.sibling, "triton"), "beside": (args.beside, args.language)}
            for side, (path, language) in others.items():
                other = _load(args, path, language, side, row) if path else None
                if other is not None:
                    calls[side] = lambda k, other=other: other(*rotated[k % count])
            times, failed = graphs_us(calls)
            if args.mode in failed:
                raise failed[args.mode]
            row["graph_us"] = times[args.mode]
            row["graph_input_sets"] = count
            for side in others:
                if side in times:
                    row[f"{side}_graph_us"] = times[side]
                elif side in failed:
                    row[f"{side}_error"] = short_error(failed[side])


def _load(args: argparse.Namespace, path: str, language_name: str, side: str, row: dict) -> Any:
    """`path`'s version of the function in `language_name`, or None (and why, in the row)."""
    import torch

    from tutor import kernels

    language = kernels.use(language_name)
    if torch.cuda.is_available():  # the GPU, as a test run chooses it
        language.select_backend(False, lambda: None)
    notes: list[str] = []
    host = Path(args.host) if args.host and side == "beside" else None
    module = load_module(Path(path), (args.function,), notes, side, host)
    fn = getattr(module, args.function, None)
    if not callable(fn):
        row[f"{side}_error"] = "; ".join(notes) or f"no {args.function}"
        return None
    return fn


if __name__ == "__main__":
    sys.exit(main())
