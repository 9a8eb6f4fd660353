"""Mutant of t1: blocks of 256 and a grid of n // 256 programs, so the last partial block
(232 of 1000 values, say) is never computed."""

import torch
import triton
import triton.language as tl

BLOCK = 256


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = x * tl.sigmoid(1.5957691216057308 * (x + 0.044715 * x * x * x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu_tanh(x):
    flat = x.contiguous().reshape(-1)
    out = torch.empty_like(flat)
    n = flat.numel()
    _gelu_kernel[(n // BLOCK,)](flat, out, n, BLOCK=BLOCK, num_warps=2)
    return out.reshape(x.shape)
