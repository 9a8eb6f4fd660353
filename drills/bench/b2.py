"""What `tutor bench b2` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

RMS_NORM_EPS = 1e-6
RSTD_ITEMSIZE = 4  # rstd is float32 whatever x's dtype


def rms_norm_backward_eager(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The closed form in fp32, as the drill's contract states it (rstd used as given)."""
    x_hat = x.float() * rstd[:, None]
    wdy = dy.float() * weight.float()
    c = (wdy * x_hat).mean(-1, keepdim=True)
    dx = rstd[:, None] * (wdy - x_hat * c)
    return dx.to(x.dtype), (dy.float() * x_hat).sum(0).to(weight.dtype)


def _inputs(s, dtype, device, gen):
    x = normal((s["m"], s["n"]), dtype, device, gen)
    dy = normal((s["m"], s["n"]), dtype, device, gen)
    weight = normal((s["n"],), dtype, device, gen, mean=1.0, std=0.1)
    rstd = torch.rsqrt(x.float().pow(2).mean(-1) + RMS_NORM_EPS)
    return dy, x, weight, rstd


RECIPES = [
    Recipe(
        function="rms_norm_backward",
        dims=("m", "n"),
        make=_inputs,
        # dy, x read and dx written ([m, n] each); rstd (fp32) and weight read; dw written
        nbytes=lambda s, b: 3 * s["m"] * s["n"] * b + s["m"] * RSTD_ITEMSIZE + 2 * s["n"] * b,
        target=75.0,  # dx and dw together, a partial buffer in between: 75% of copy bandwidth
        eager=rms_norm_backward_eager,
        rows_key="m",
    ),
]
