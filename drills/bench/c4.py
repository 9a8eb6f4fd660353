"""What `tutor bench c4` needs besides the kernels: inputs, bytes moved, torch eager.

The issue's targets at 4096 x 4096 bf16: at least 85% of copy bandwidth (the recipe's default
target), and no slower than T2's Triton softmax at the same shape (`sibling`: timed in turn
with the reference in torch.compile's process, on these inputs). Rows longer than a warp of the
reference keeps in registers (4096 bf16 values) are read three times, so there its target is to
be ahead of torch eager and torch.compile (`rereads`).
"""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

HELD = 4096  # bf16 values a warp of the reference holds: 16 vectors of 8 a lane, 32 lanes


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
        sibling="t2_softmax.py",
        rereads=lambda s: s["n"] > HELD,  # the bench shapes are bf16
    ),
]
