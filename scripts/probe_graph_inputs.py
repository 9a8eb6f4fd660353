#!/usr/bin/env python3
"""Find what makes m1's matmul slower in the bench's CUDA graphs than in scripts/probe_clocks.py
(issue 27; H100, 2026-12-05: the bench process 208-220 µs a call, the probe 196, cuBLAS 190 in
both). Both time with tutor.bench.timing.graph_us; they differ in how the graph's inputs are
made and in how the solution is imported. Each variant here changes one of those, in one
process, cuBLAS and the solution timed side by side:

    python scripts/probe_graph_inputs.py [--out DIR]

- probe: unit normals drawn in bf16, three distinct sets (probe_clocks.py's way);
- bench: the recipe's inputs (drills/bench/m1.py, seed 0) cloned into as many sets as the bench
  takes (tutor.bench.child's way: every set holds the same values);
- bench-seeds: the recipe's inputs with a seed per set (distinct values);
- bench-import: the bench's sets, the solution imported as the bench process imports it.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from tune_sweep import save_json  # noqa: E402 - the scripts folder is on the path

from tutor.bench.recipe import clone_inputs, load_recipes  # noqa: E402
from tutor.bench.timing import graph_input_sets, graph_us, l2_bytes  # noqa: E402

SHAPE = {"m": 4096, "n": 4096, "k": 4096}
ROUNDS = 3


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as tutor.bench.child._load does
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    solution = ROOT / "drills" / "solutions" / "m1_matmul.py"
    plain = _import(solution, "m1_plain").matmul
    as_bench = _import(solution, f"bench_mine_{abs(hash(str(solution)))}").matmul
    op = load_recipes(ROOT / "drills" / "bench" / "m1.py")["matmul"]
    count = graph_input_sets(op.bytes_moved(SHAPE, "bfloat16"), l2_bytes())
    gen = torch.Generator(device="cuda").manual_seed(0)
    base = op.inputs(SHAPE, "bfloat16", "cuda")
    variants = {
        "probe": (
            [
                tuple(
                    torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16, generator=gen)
                    for _ in range(2)
                )
                for _ in range(3)
            ],
            plain,
        ),
        "bench": ([clone_inputs(base) for _ in range(count)], plain),
        "bench-seeds": (
            [op.inputs(SHAPE, "bfloat16", "cuda", seed=s) for s in range(count)],
            plain,
        ),
        "bench-import": ([clone_inputs(base) for _ in range(count)], as_bench),
    }
    for sets, fn in variants.values():  # compile outside the timed stretches
        fn(*sets[0])
    torch.cuda.synchronize()
    rows = []
    for rnd in range(ROUNDS):
        for name, (sets, fn) in variants.items():
            n = len(sets)
            cublas = graph_us(lambda k, sets=sets, n=n: torch.matmul(*sets[k % n]))
            mine = graph_us(lambda k, sets=sets, n=n, fn=fn: fn(*sets[k % n]))
            rows.append({"variant": name, "round": rnd, "sets": n, "cublas": cublas, "m1": mine})
            print(
                f"round {rnd}  {name:<13} {n} sets  cuBLAS {cublas:7.2f} µs  "
                f"m1 {mine:7.2f} µs  ({cublas / mine:.0%})",
                flush=True,
            )
    result = {"device": torch.cuda.get_device_name(0), "shape": SHAPE, "rows": rows}
    save_json(args.out, "probe-graph-inputs.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
