"""What `tutor bench c1` needs besides the kernel: inputs, bytes moved, torch eager.

axpy works in place: y = a * x + y reads x and y once and writes y once, 3 * n * 2 bytes for
bf16. The issue's target is the recipe's default, at least 85% of copy bandwidth, at n = 2^26
and at an odd n (a tail after the last 16-byte vector). The host launches a grid that fills
every SM once (drills/host/c1_axpy.py) whatever n is, so each thread loops over about
n / (SMs * 2048) elements.
"""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

A = 0.5


def axpy_eager(a: float, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return y.add_(x, alpha=a)


def _inputs(s, dtype, device, gen):
    x = normal((s["n"],), dtype, device, gen)
    y = normal((s["n"],), dtype, device, gen)
    return A, x, y


RECIPES = [
    Recipe(
        function="axpy",
        dims=("n",),
        make=_inputs,
        nbytes=lambda s, itemsize: 3 * s["n"] * itemsize,  # x and y read, y written
        eager=axpy_eager,
        in_place=(2,),
    ),
]
