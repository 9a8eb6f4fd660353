"""Mutant for F6: the quantization is computed with torch operations; no Triton kernel runs."""

import torch
import triton  # noqa: F401  (imported, never used: the kernel was never written)
import triton.language as tl  # noqa: F401


def quant_per_token(x, amax_ub=None):
    xf = x.float()
    amax = xf.abs().amax(-1)
    if amax_ub is not None:
        amax = amax.clamp_max(amax_ub)
    scale = amax.clamp_min(1e-10) / 127.0
    v = (xf / scale[:, None]).clamp(-127, 127)
    return (torch.sign(v) * torch.floor(v.abs() + 0.5)).to(torch.int8), scale
