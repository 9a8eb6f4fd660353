"""What `tutor bench c2` needs besides the kernel: inputs, bytes moved, torch eager.

The issue's targets at 4096 x 4096 bf16: at least 85% of copy bandwidth (the recipe's default
target), and no slower than T3's Triton rms_norm at the same shape (`sibling`: timed in turn
with the reference in torch.compile's process, on these inputs).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal

EPS = 1e-6


def rms_norm_eager(x: torch.Tensor, weight: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    # eps given explicitly: F.rms_norm's default is float32's machine epsilon, not 1e-6.
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def _inputs(s, dtype, device, gen):
    x = normal((s["m"], s["n"]), dtype, device, gen)
    weight = normal((s["n"],), dtype, device, gen, mean=1.0, std=0.1)
    return x, weight, EPS


RECIPES = [
    Recipe(
        function="rms_norm",
        dims=("m", "n"),
        make=_inputs,
        nbytes=lambda s, b: 2 * s["m"] * s["n"] * b + s["n"] * b,  # x, weight read; y written
        eager=rms_norm_eager,
        rows_key="m",
        sibling="t3_layernorm.py",
    ),
]
