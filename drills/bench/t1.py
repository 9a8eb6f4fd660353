"""What `tutor bench t1` needs besides the kernel: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal


def gelu_tanh_eager(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


RECIPES = [
    Recipe(
        function="gelu_tanh",
        dims=("n",),
        make=lambda s, dtype, device, gen: (normal((s["n"],), dtype, device, gen),),
        nbytes=lambda s, itemsize: 2 * s["n"] * itemsize,  # x read, y written
        eager=gelu_tanh_eager,
    ),
]
