"""What `tutor bench t5` needs besides the kernel: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def transpose_eager(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()


RECIPES = [
    Recipe(
        function="transpose",
        dims=("m", "n"),
        make=lambda s, dtype, device, gen: (normal((s["m"], s["n"]), dtype, device, gen),),
        nbytes=lambda s, itemsize: 2 * s["m"] * s["n"] * itemsize,  # x read, y written
        target=75.0,  # a transpose reads rows and writes columns: 75% of copy bandwidth
        eager=transpose_eager,
    ),
]
