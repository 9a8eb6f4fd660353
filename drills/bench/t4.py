"""What `tutor bench t4` needs besides the kernel: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def softmax_online_eager(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


RECIPES = [
    Recipe(
        function="softmax_online",
        dims=("m", "n"),
        make=lambda s, dtype, device, gen: (normal((s["m"], s["n"]), dtype, device, gen, std=2.0),),
        # x read once, y written once: the floor. The two-pass kernel reads x twice, which
        # earns nothing here (on an H200 the second read came from DRAM, not L2: ~70% at 64k).
        nbytes=lambda s, itemsize: 2 * s["m"] * s["n"] * itemsize,
        eager=softmax_online_eager,
        rows_key="m",
    ),
]
