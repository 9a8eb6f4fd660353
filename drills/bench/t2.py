"""What `tutor bench t2` needs besides the kernel: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def softmax_eager(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


RECIPES = [
    Recipe(
        function="softmax",
        dims=("m", "n"),
        make=lambda s, dtype, device, gen: (normal((s["m"], s["n"]), dtype, device, gen, std=2.0),),
        nbytes=lambda s, itemsize: 2 * s["m"] * s["n"] * itemsize,  # x read, y written
        eager=softmax_eager,
        rows_key="m",
    ),
]
