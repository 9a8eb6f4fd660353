#!/usr/bin/env python3
"""Does the order of the bench's CUDA-graph timings decide m1's and m2's share of cuBLAS, and
m3's of SDPA? (issue 27; H100, 2026-12-05: m1 196-203 µs a call in scripts/probe_clocks.py,
whose every stretch follows a moment's idle, and 208-220 in the bench process, timed right
after cuBLAS; the inputs and the import were ruled out by scripts/probe_graph_inputs.py.
2026-12-06: m3's solution at S = 1024 took 167.9 µs in turn with SDPA and 153.9 in turn with
flex_attention, in one report.)

    python scripts/probe_graph_order.py [--rounds 3] [--drills m1,m2,m3] [--clocks] [--out DIR]

Each round times every pair five ways, in one process:

- yardstick first: each graph timed alone, one after the other, no warm-up (the bench's way
  before `tutor.bench.timing.graphs_us`);
- solution first: the same, the other way round;
- warmed, yardstick first / solution first: each graph alone after its own warm-up
  (`timing.graph_us`), so each runs at the clock its own load settles at;
- in turn: both graphs replayed untimed first (0.3 s for these), then in rotation (`graphs_us`, the
  bench's way now).

`--clocks` samples the card with nvidia-smi (scripts/probe_clocks.py's Sampler) through each
graph timed alone and through each in-turn timing as a whole: whether a side runs slower
beside the other because the card's clock is lower there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from probe_clocks import Sampler  # noqa: E402 - the scripts folder is on the path
from tune_sweep import load_solution, save_json  # noqa: E402

from tutor.bench import timing  # noqa: E402
from tutor.bench.recipe import clone_inputs, load_recipes  # noqa: E402

MATMUL = {"m": 4096, "n": 4096, "k": 4096}
# The pairs: label, drill, solution file, function, yardstick, shape.
PAIRS = (
    ("m1", "m1", "m1_matmul", "matmul", "cuBLAS", MATMUL),
    ("m2", "m2", "m2_linear_act", "linear_gelu", "cuBLAS + gelu", MATMUL),
    *(
        (
            f"m3 s={s} causal={c}",
            "m3",
            "m3_attention",
            "attention",
            "SDPA",
            {"b": 4, "h": 32, "s": s, "d": 128, "causal": c},
        )
        for s, c in ((1024, 0), (1024, 1), (4096, 1))
    ),
)


def _sampled(timed, clocks: dict | None, name: str):
    """`timed()`; with `clocks` (--clocks), the card sampled meanwhile into clocks[name]."""
    if clocks is None:
        return timed()
    with Sampler() as sampler:
        result = timed()
    clocks[name] = sampler.summary()
    return result


def _alone(calls: dict, clocks: dict | None) -> dict[str, float]:
    """Each graph timed by itself, one after the other, with no warm-up."""
    warm, timing.WARM_S = timing.WARM_S, 0.0
    try:
        return _warmed(calls, clocks)
    finally:
        timing.WARM_S = warm


def _warmed(calls: dict, clocks: dict | None) -> dict[str, float]:
    """Each graph timed by itself after timing.WARM_S's warm-up, one after the other."""
    return {
        name: _sampled(lambda call=call: timing.graph_us(call), clocks, name)
        for name, call in calls.items()
    }


def _in_turn(calls: dict, clocks: dict | None) -> dict[str, float]:
    """The graphs timed in turn, the bench's way; the card sampled through all of it."""
    return _sampled(lambda: timing.graphs_us(calls)[0], clocks, "in turn")


def _clock_text(clocks: dict | None) -> str:
    """The median SM clock and power of each sampled stretch, for the printed line."""
    parts = [
        f"{name} {seen['sm_mhz']:.0f} MHz {seen['watts']:.0f} W"
        for name, seen in (clocks or {}).items()
        if seen.get("samples")
    ]
    return ("  [" + "; ".join(parts) + "]") if parts else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--drills", default="m1,m2,m3")
    parser.add_argument("--clocks", action="store_true", help="sample the card's clock and power")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    pairs = {}
    for label, drill, file, function, yardstick, shape in PAIRS:
        if drill not in args.drills.split(","):
            continue
        op = load_recipes(ROOT / "drills" / "bench" / f"{drill}.py")[function]
        count = timing.graph_input_sets(op.bytes_moved(shape, "bfloat16"), timing.l2_bytes())
        base = op.inputs(shape, "bfloat16", "cuda")
        sets = [clone_inputs(base) for _ in range(count)]
        mine = getattr(load_solution(file), function)
        pairs[label] = {
            yardstick: lambda k, sets=sets, n=count, f=op.eager: f(*sets[k % n]),
            f"{drill} solution": lambda k, sets=sets, n=count, f=mine: f(*sets[k % n]),
        }
    rows = []
    for rnd in range(args.rounds):
        for drill, calls in pairs.items():
            yardstick, solution = list(calls)
            swapped = {solution: calls[solution], yardstick: calls[yardstick]}
            ways = {
                "yardstick first": (_alone, calls),
                "solution first": (_alone, swapped),
                "warmed, yardstick first": (_warmed, calls),
                "warmed, solution first": (_warmed, swapped),
                "in turn": (_in_turn, calls),
            }
            for way, (timed, sides_in_order) in ways.items():
                clocks = {} if args.clocks else None
                times = timed(sides_in_order, clocks)
                share = times[yardstick] / times[solution]
                rows.append(
                    {"round": rnd, "drill": drill, "way": way, **times, "share": share}
                    | ({"clocks": clocks} if clocks else {})
                )
                print(
                    f"round {rnd}  {drill}  {way:<23} {yardstick} {times[yardstick]:7.2f} µs  "
                    f"solution {times[solution]:7.2f} µs  ({share:.1%}){_clock_text(clocks)}",
                    flush=True,
                )
    result = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "warm_s": timing.WARM_S,
        "rows": rows,
    }
    save_json(args.out, "probe-graph-order.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
