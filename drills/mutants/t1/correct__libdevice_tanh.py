"""t1, Liger-Kernel style: tanh from libdevice, imported by name, and the math in fp32."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra.libdevice import tanh

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)  # a plain float global would not compile on a GPU


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offs < n
    x = tl.load(x_ptr + offs, mask=in_bounds, other=0.0).to(tl.float32)
    inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (1.0 + tanh(inner))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=in_bounds)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    flat = x.contiguous().view(-1)
    out = torch.empty_like(flat)
    n = flat.numel()
    _gelu_kernel[(triton.cdiv(n, 512),)](flat, out, n, BLOCK=512, num_warps=4)
    return out.view(x.shape)
