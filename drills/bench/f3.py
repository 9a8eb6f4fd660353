"""What `tutor bench f3` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal

RMS_NORM_EPS = 1e-6


def fused_add_rmsnorm_eager(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = RMS_NORM_EPS
) -> None:
    """h = x + residual in fp32; residual <- h (rounded); x <- rms_norm(h) * weight (FlashInfer)."""
    h = x.float() + residual.float()
    residual.copy_(h)
    x.copy_(F.rms_norm(h, (h.shape[-1],), weight.float(), eps))


def silu_and_mul_eager(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


def _fused_add_rmsnorm_inputs(s, dtype, device, gen):
    x = normal((s["t"], s["h"]), dtype, device, gen)
    residual = normal((s["t"], s["h"]), dtype, device, gen)
    weight = normal((s["h"],), dtype, device, gen, mean=1.0, std=0.1)
    return x, residual, weight, RMS_NORM_EPS


RECIPES = [
    Recipe(
        function="fused_add_rmsnorm",
        dims=("t", "h"),
        make=_fused_add_rmsnorm_inputs,
        # x, residual, weight read; x and residual written back
        nbytes=lambda s, b: 4 * s["t"] * s["h"] * b + s["h"] * b,
        eager=fused_add_rmsnorm_eager,
        in_place=(0, 1),
        rows_key="t",
    ),
    Recipe(
        function="silu_and_mul",
        dims=("t", "i"),
        make=lambda s, dtype, device, gen: (normal((s["t"], 2 * s["i"]), dtype, device, gen),),
        nbytes=lambda s, b: 3 * s["t"] * s["i"] * b,  # x [t, 2i] read, out [t, i] written
        eager=silu_and_mul_eager,
        rows_key="t",
    ),
]
