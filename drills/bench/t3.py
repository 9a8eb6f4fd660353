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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """y, mean and rstd, as the drill's layer_norm returns them; only y is compared
    (`compared=1` below: torch keeps the statistics as [M, 1]).

    Why not F.layer_norm: it returns y alone, so torch.compile of it leaves the statistics
    out and writes less than the kernel it is compared with (4096 x 1000 bf16 on an H100, CUDA
    graphs in turn: compile 6.38 us for y alone, 6.57-6.59 with mean and rstd, the reference
    6.57-6.64; docs/reports/2026-12-06/probes-matmul-layernorm.md). Eager runs the same CUDA
    kernel either way: F.layer_norm computes the statistics too and drops them."""
    return torch.native_layer_norm(x, [x.shape[-1]], weight, bias, eps)


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
