#!/usr/bin/env python3
"""Is a bench number GPU time or the host's launch cost? T3's wrappers at 4096 x 1000 and 8192.

    python scripts/launch_overhead.py

For each case: do_bench's median (three times), the GPU time per call from CUDA-graph replay,
and the host time per call of the wrapper alone (many calls without waiting for the GPU). When
the host time approaches the do_bench time, the number measures Python and the launcher.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch
from triton.testing import do_bench

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tune_sweep import load_solution  # noqa: E402 - the folder of this script is on sys.path


def main() -> int:
    t3 = load_solution("t3_layernorm")
    for n in (1000, 8192):
        x = torch.randn(4096, n, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        call = lambda: t3.layer_norm(x, w, b, 1e-5)  # noqa: E731, B023
        call()
        torch.cuda.synchronize()
        benches = [do_bench(call, return_mode="median") * 1e3 for _ in range(3)]
        started = time.perf_counter()
        for _ in range(200):
            call()
        host_us = (time.perf_counter() - started) / 200 * 1e6
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(20):
                call()
        graph.replay()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(10):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        graph_us = start.elapsed_time(end) * 1e3 / 200
        print(
            f"layer_norm 4096x{n}: do_bench {' '.join(f'{t:.1f}' for t in benches)} us; "
            f"GPU per call in a graph {graph_us:.1f} us; host per call {host_us:.1f} us",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
