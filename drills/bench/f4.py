"""What `tutor bench f4` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

N_POSITIONS = 8192  # rows in the cos/sin caches (the model's context length)
BASE = 10000.0
CACHE_ITEMSIZE = 4  # cos and sin are fp32 whatever x's dtype
POSITION_ITEMSIZE = 8  # int64


def apply_rope_eager(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[positions].unsqueeze(1), sin[positions].unsqueeze(1)
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)


def _apply_rope_inputs(s, dtype, device, gen):
    x = normal((s["t"], s["h"], s["d"]), dtype, device, gen)
    inv_freq = 1.0 / BASE ** (
        torch.arange(0, s["d"], 2, device=device, dtype=torch.float32) / s["d"]
    )
    angles = torch.outer(torch.arange(N_POSITIONS, device=device, dtype=torch.float32), inv_freq)
    positions = torch.randint(0, N_POSITIONS, (s["t"],), device=device, generator=gen)
    return x, angles.cos(), angles.sin(), positions


RECIPES = [
    Recipe(
        function="apply_rope",
        dims=("t", "h", "d"),
        make=_apply_rope_inputs,
        # x read and out written once; one row of cos and of sin (D/2 fp32 each) and one
        # position per token
        nbytes=lambda s, b: (
            2 * s["t"] * s["h"] * s["d"] * b
            + s["t"] * s["d"] * CACHE_ITEMSIZE
            + s["t"] * POSITION_ITEMSIZE
        ),
        eager=apply_rope_eager,
        rows_key="t",
    ),
]
