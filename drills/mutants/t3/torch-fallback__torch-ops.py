"""Mutant for T3: both norms are computed with torch operations; no Triton kernel runs."""

import torch
import triton  # noqa: F401  (imported, never used: the kernel was never written)
import triton.language as tl  # noqa: F401


def layer_norm(x, weight, bias, eps=1e-5):
    x32 = x.float()
    mean = x32.mean(dim=-1)
    var = x32.var(dim=-1, unbiased=False)
    rstd = torch.rsqrt(var + eps)
    y = (x32 - mean[..., None]) * rstd[..., None] * weight.float() + bias.float()
    return y.to(x.dtype), mean.reshape(-1), rstd.reshape(-1)


def rms_norm(x, weight, eps=1e-6):
    x32 = x.float()
    rstd = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (x32 * rstd * weight.float()).to(x.dtype)
