"""What `tutor bench m2` needs besides the kernel: inputs, bytes moved, FLOPs, torch eager."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal


def linear_gelu_eager(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # cuBLAS for the GEMM (bias fused in its epilogue), then GELU as a second kernel.
    return F.gelu(F.linear(x, w, b), approximate="tanh")


def _inputs(s, dtype, device, gen):
    # w ~ N(0, 1/K), as nn.Linear initialises it: v = x @ w.T + b is O(1), where GELU bends.
    x = normal((s["m"], s["k"]), dtype, device, gen)
    w = normal((s["n"], s["k"]), dtype, device, gen, std=s["k"] ** -0.5)
    b = normal((s["n"],), dtype, device, gen, std=0.1)
    return x, w, b


RECIPES = [
    Recipe(
        function="linear_gelu",
        dims=("m", "n", "k"),
        make=_inputs,
        # x, w, b read once; y written once
        nbytes=lambda s, b: (s["m"] * s["k"] + s["n"] * s["k"] + s["n"] + s["m"] * s["n"]) * b,
        flops=lambda s: 2 * s["m"] * s["n"] * s["k"],
        target=0.8,  # 80% of torch (cuBLAS matmul, then bias and GELU)
        eager=linear_gelu_eager,
        rows_key="m",
    ),
]
