"""Mutant for B2: the closed form in torch; no Triton kernel runs."""

import torch
import triton  # noqa: F401  (imported, never used: the kernel was never written)
import triton.language as tl  # noqa: F401


def rms_norm_backward(dy, x, weight, rstd):
    x_hat = x.float() * rstd[:, None]
    wdy = dy.float() * weight.float()
    c = (wdy * x_hat).mean(-1, keepdim=True)
    dx = rstd[:, None] * (wdy - x_hat * c)
    return dx.to(x.dtype), (dy.float() * x_hat).sum(0).to(weight.dtype)
