#!/usr/bin/env python3
"""Time the reference wrappers (as `tutor bench` does) with num_warps forced to each candidate.

    python scripts/tune_wrappers.py

A check on scripts/tune_sweep.py, which launches the kernels directly: this one goes through
each solution's own host wrapper and the bench's inputs, so it measures what the bench reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tune_sweep import load_solution  # noqa: E402 - the folder of this script is on sys.path

from tutor.bench.recipe import load_recipes  # noqa: E402
from tutor.bench.timing import median_ms  # noqa: E402

CASES = [
    ("t2_softmax", "softmax", {"m": 4096, "n": 1000}, "_num_warps"),
    ("t2_softmax", "softmax", {"m": 4096, "n": 8192}, "_num_warps"),
    ("t3_layernorm", "layer_norm", {"m": 4096, "n": 1000}, "_num_warps"),
    ("t3_layernorm", "layer_norm", {"m": 4096, "n": 8192}, "_num_warps"),
    ("t3_layernorm", "rms_norm", {"m": 4096, "n": 8192}, "_num_warps"),
]


def main() -> int:
    for file, function, shape, knob in CASES:
        module = load_solution(file)
        recipe = load_recipes(ROOT / "drills" / "bench" / f"{file.split('_')[0]}.py")[function]
        inputs = recipe.inputs(shape, "bfloat16", "cuda")
        nbytes = recipe.bytes_moved(shape, "bfloat16")
        for warps in (1, 2, 4, 8, 16):
            setattr(module, knob, lambda block_n, w=warps: w)
            fn = getattr(module, function)
            fn(*inputs)
            us = median_ms(lambda fn=fn, inputs=inputs: fn(*inputs)) * 1e3
            print(
                f"{function} {shape} warps={warps:<3} {us:8.2f} µs {nbytes / us / 1e3:7.0f} GB/s",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
