"""What `tutor bench t0` needs besides the kernel: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def add_eager(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.add(x, y)


RECIPES = [
    Recipe(
        function="add",
        dims=("n",),
        make=lambda s, dtype, device, gen: (
            normal((s["n"],), dtype, device, gen),
            normal((s["n"],), dtype, device, gen),
        ),
        nbytes=lambda s, itemsize: 3 * s["n"] * itemsize,  # x and y read, out written
        eager=add_eager,
    ),
]
