"""What `tutor bench m1` needs besides the kernel: inputs, bytes moved, FLOPs, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def matmul_eager(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.matmul(a, b)  # cuBLAS on the GPU: the yardstick


def _inputs(s, dtype, device, gen):
    # std 1/sqrt(sqrt(K)) each, so c = a @ b has unit size and bf16 keeps its precision.
    std = s["k"] ** -0.25
    return (
        normal((s["m"], s["k"]), dtype, device, gen, std=std),
        normal((s["k"], s["n"]), dtype, device, gen, std=std),
    )


RECIPES = [
    Recipe(
        function="matmul",
        dims=("m", "n", "k"),
        make=_inputs,
        nbytes=lambda s, b: (s["m"] * s["k"] + s["k"] * s["n"] + s["m"] * s["n"]) * b,
        flops=lambda s: 2 * s["m"] * s["n"] * s["k"],  # one multiply and one add per term
        target=0.95,  # 95% of cuBLAS (torch.matmul), issue 27
        eager=matmul_eager,
        rows_key="m",
    ),
]
