"""What `tutor bench f6` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

QMAX = 127.0
AMAX_MIN = 1e-10
SCALE_ITEMSIZE = 4  # the scale is float32 whatever x's dtype
Q_ITEMSIZE = 1  # q is int8


def quant_per_token_eager(x: torch.Tensor, amax_ub: float | None = None):
    """The drill's contract in torch: the same fp32 scale, x / scale, clamp, round half away."""
    xf = x.float()
    amax = xf.abs().amax(-1)
    if amax_ub is not None:
        amax = amax.clamp_max(amax_ub)
    scale = amax.clamp_min(AMAX_MIN) / QMAX
    v = (xf / scale[:, None]).clamp(-QMAX, QMAX)
    return (v + torch.where(v >= 0, 0.5, -0.5)).to(torch.int8), scale


RECIPES = [
    Recipe(
        function="quant_per_token",
        dims=("t", "h"),
        make=lambda s, dtype, device, gen: (normal((s["t"], s["h"]), dtype, device, gen),),
        # x read; q written at one byte an element; one fp32 scale per row written
        nbytes=lambda s, b: s["t"] * s["h"] * (b + Q_ITEMSIZE) + s["t"] * SCALE_ITEMSIZE,
        eager=quant_per_token_eager,
        rows_key="t",
    ),
]
