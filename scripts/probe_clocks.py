#!/usr/bin/env python3
"""Probe why m1's and m2's matmuls lose more than cuBLAS from do_bench to the bench's CUDA
graphs (issue 27; H100, 2026-12-05: m1 184 -> 213 µs a call, cuBLAS 184 -> 195): read the SM
clock, the power draw and the clock-event reasons while each one's graph replays, in both
orders and with and without a rest between them (the bench times torch eager first, then the
solution, back to back).

    python scripts/probe_clocks.py [--rounds 3] [--rest 2] [--like-bench] [--out DIR]

Each timed stretch is the bench's own: 200 calls captured in one CUDA graph, the inputs rotated
over three sets, 11 replays, the median per call (tutor.bench.timing.graph_us); nvidia-smi
samples the card every 20 ms meanwhile. Nothing here changes a drill. `--like-bench` takes
the bench's own inputs (drills/bench/m1.py's scale, std K^-1/4) and its number of input sets
(tutor.bench.timing.graph_input_sets) instead of unit normals over three sets.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from tune_sweep import load_solution, save_json  # noqa: E402 - the scripts folder is on the path

from tutor.bench.timing import (  # noqa: E402
    graph_input_sets,
    graph_us,
    l2_bytes,
)

SIZE = 4096
SETS = 3  # input sets the graph's calls rotate over (the bench takes enough to fill twice the L2)
QUERY = "clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"


class Sampler:
    """nvidia-smi reading the card every 20 ms while the `with` block runs."""

    def __enter__(self) -> Sampler:
        self.proc = subprocess.Popen(
            ["nvidia-smi", "-i", "0", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"]
            + ["-lms", "20"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        time.sleep(0.1)  # its first sample comes after it starts
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=10)
        self.samples = []
        for line in out.splitlines():
            parts = [p.strip() for p in line.split(",")]
            try:
                clock, power, temp = float(parts[0]), float(parts[1]), float(parts[2])
            except (ValueError, IndexError):
                continue
            self.samples.append((clock, power, temp, parts[3] if len(parts) > 3 else ""))

    def summary(self) -> dict:
        if not self.samples:
            return {"samples": 0}
        clocks, powers, temps, reasons = zip(*self.samples, strict=True)
        return {
            "samples": len(self.samples),
            "sm_mhz": statistics.median(clocks),
            "sm_mhz_min": min(clocks),
            "watts": statistics.median(powers),
            "celsius": max(temps),
            "reasons": sorted(set(reasons)),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rest", type=float, default=2.0, help="seconds idle between stretches")
    parser.add_argument("--like-bench", action="store_true", help="the bench's inputs and sets")
    parser.add_argument("--out", default=None, help="a folder for probe-clocks.json")
    args = parser.parse_args()

    matmul = load_solution("m1_matmul").matmul
    linear_gelu = load_solution("m2_linear_act").linear_gelu
    gen = torch.Generator(device="cuda").manual_seed(0)

    std = SIZE**-0.25 if args.like_bench else 1.0
    count = graph_input_sets(3 * SIZE * SIZE * 2, l2_bytes()) if args.like_bench else SETS

    def bf16(*shape):
        return std * torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=gen)

    sets = [(bf16(SIZE, SIZE), bf16(SIZE, SIZE), bf16(SIZE)) for _ in range(count)]
    print(f"inputs: std {std:.3f}, {count} sets", flush=True)
    impls = {
        "cuBLAS matmul": lambda a, b, bias: a @ b,
        "m1 solution": lambda a, b, bias: matmul(a, b),
        "cuBLAS + gelu": lambda a, b, bias: F.gelu(F.linear(a, b, bias), approximate="tanh"),
        "m2 solution": lambda a, b, bias: linear_gelu(a, b, bias),
    }
    for fn in impls.values():  # compile and autotune outside the timed stretches
        fn(*sets[0])
    torch.cuda.synchronize()

    rows = []
    pairs = [("cuBLAS matmul", "m1 solution"), ("cuBLAS + gelu", "m2 solution")]
    for rest in (0.0, args.rest):
        for rnd in range(args.rounds):
            for first, second in pairs:
                order = (first, second) if rnd % 2 == 0 else (second, first)
                for name in order:
                    time.sleep(rest)
                    with Sampler() as sampler:
                        us = graph_us(lambda k, fn=impls[name]: fn(*sets[k % count]))
                    row = {"impl": name, "rest_s": rest, "round": rnd, "order": list(order)}
                    row |= {"us": round(us, 2), **sampler.summary()}
                    rows.append(row)
                    print(
                        f"rest {rest:.0f} s  round {rnd}  {name:<14} {us:8.2f} µs  "
                        f"{row.get('sm_mhz', '?')} MHz (min {row.get('sm_mhz_min', '?')})  "
                        f"{row.get('watts', '?')} W  {row.get('celsius', '?')} C  "
                        f"{' '.join(row.get('reasons', []))}",
                        flush=True,
                    )
    result = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "shape": [SIZE, SIZE, SIZE],
        "inputs": {"std": std, "sets": count},
        "rows": rows,
    }
    save_json(args.out, "probe-clocks.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
