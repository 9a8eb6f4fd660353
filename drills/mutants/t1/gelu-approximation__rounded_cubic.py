"""Mutant of t1: the cubic coefficient rounded to 0.0447 (and written as x * sigmoid(2z))."""

import torch
import triton
import triton.language as tl

K0 = 0.7978845608028654
K1 = 0.0447


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, k0, k1, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    x3 = x * x * x
    y = x * tl.sigmoid(2.0 * k0 * (x + k1 * x3))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu_tanh(x):
    flat = x.contiguous().view(-1)
    out = torch.empty_like(flat)
    n = flat.numel()
    _gelu_kernel[(triton.cdiv(n, 2048),)](flat, out, n, K0, K1, BLOCK=2048, num_warps=8)
    return out.view(x.shape)
