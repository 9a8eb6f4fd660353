"""What `tutor bench t3` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal

LAYER_NORM_EPS = 1e-5
RMS_NORM_EPS = 1e-6
STATS_ITEMSIZE = 4  # layer_norm's mean and rstd are float32 whatever x's dtype


def layer_norm_eager(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = LAYER_NORM_EPS
) -> torch.Tensor:
    # y only: eager gives no mean and rstd to compare with (`compared=1` below).
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def rms_norm_eager(
    x: torch.Tensor, weight: torch.Tensor, eps: float = RMS_NORM_EPS
) -> torch.Tensor:
    # eps given explicitly: F.rms_norm's default is float32's machine epsilon, not 1e-6.
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def _layer_norm_inputs(s, dtype, device, gen):
    x = normal((s["m"], s["n"]), dtype, device, gen, mean=0.5)
    weight = normal((s["n"],), dtype, device, gen, mean=1.0, std=0.1)
    bias = normal((s["n"],), dtype, device, gen, std=0.1)
    return x, weight, bias, LAYER_NORM_EPS


def _rms_norm_inputs(s, dtype, device, gen):
    x = normal((s["m"], s["n"]), dtype, device, gen)
    weight = normal((s["n"],), dtype, device, gen, mean=1.0, std=0.1)
    return x, weight, RMS_NORM_EPS


RECIPES = [
    Recipe(
        function="layer_norm",
        dims=("m", "n"),
        make=_layer_norm_inputs,
        # x, weight, bias read; y written; mean and rstd (fp32, one per row) written
        nbytes=lambda s, b: 2 * s["m"] * s["n"] * b + 2 * s["n"] * b + 2 * s["m"] * STATS_ITEMSIZE,
        eager=layer_norm_eager,
        compared=1,
        rows_key="m",
    ),
    Recipe(
        function="rms_norm",
        dims=("m", "n"),
        make=_rms_norm_inputs,
        nbytes=lambda s, b: 2 * s["m"] * s["n"] * b + s["n"] * b,  # x, weight read; y written
        eager=rms_norm_eager,
        rows_key="m",
    ),
]
