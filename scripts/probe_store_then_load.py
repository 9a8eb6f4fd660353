#!/usr/bin/env python3
"""How often a softmax kernel file gives a wrong row, over many runs on a GPU: for a kernel
that stores values and reads them back within a program (t4's two-pass persistent slow kernel),
where a missing barrier shows only now and then.

    python scripts/probe_store_then_load.py FILE [FILE ...] [--runs 200]

Each FILE defines softmax_online(x); it runs `--runs` times at each shape (few rows, so each
program's stores are read back at once, and many), and the rows off torch.softmax by more than
1e-2 are counted.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import torch

SHAPES = ((3, 5000), (100, 4096), (600, 3000), (2000, 10000))


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wrong_rows(fn, runs: int) -> dict[str, int]:
    """Rows off torch.softmax, summed over `runs` calls, by shape."""
    found = {}
    gen = torch.Generator(device="cuda").manual_seed(0)
    for m, n in SHAPES:
        x = torch.randn(m, n, device="cuda", generator=gen) * 2
        want = torch.softmax(x, dim=-1)
        bad = 0
        for _ in range(runs):
            got = fn(x)
            bad += int(((got - want).abs() > 1e-2).any(dim=-1).sum())
        found[f"{m}x{n}"] = bad
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    for path in args.files:
        found = wrong_rows(load(path).softmax_online, args.runs)
        print(f"{path.name}: wrong rows in {args.runs} runs a shape: {found}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
