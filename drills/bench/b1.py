"""What `tutor bench b1` needs besides the kernel: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def softmax_backward_eager(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    # What autograd runs for torch.softmax's backward: dx = y * (dy - sum(dy * y)).
    return torch._softmax_backward_data(dy, y, -1, y.dtype)


def _inputs(s, dtype, device, gen):
    logits = normal((s["m"], s["n"]), torch.float32, device, gen, std=2.0)
    y = torch.softmax(logits, dim=-1).to(dtype)  # a real softmax output: rows sum to 1
    dy = normal((s["m"], s["n"]), dtype, device, gen)
    return y, dy


RECIPES = [
    Recipe(
        function="softmax_backward",
        dims=("m", "n"),
        make=_inputs,
        nbytes=lambda s, itemsize: 3 * s["m"] * s["n"] * itemsize,  # y, dy read; dx written
        eager=softmax_backward_eager,
        rows_key="m",
    ),
]
