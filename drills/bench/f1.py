"""What `tutor bench f1` needs beside the kernel: inputs, bytes, eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def eager(x: torch.Tensor) -> torch.Tensor:
    """TODO: the same function in torch, the yardstick (and what torch.compile compiles)."""
    return x.clone()


RECIPES = [
    Recipe(
        function="top_p_renorm",
        dims=("n",),
        make=lambda s, dtype, device, gen: (normal((s["n"],), dtype, device, gen),),
        nbytes=lambda s, itemsize: 2 * s["n"] * itemsize,  # x read, y written
        eager=eager,
    ),
]
