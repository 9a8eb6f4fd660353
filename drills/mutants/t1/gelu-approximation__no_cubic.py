"""Mutant of t1: the tanh form with the 0.044715 * x**3 term left out."""

import torch
import triton
import triton.language as tl


@triton.jit
def _tanh(z):
    return 2.0 * tl.sigmoid(2.0 * z) - 1.0


@triton.jit
def _kernel(src, dst, numel, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK_SIZE
    idx = start + tl.arange(0, BLOCK_SIZE)
    m = idx < numel
    a = tl.load(src + idx, mask=m, other=0.0)
    a = a.to(tl.float32)
    inner = 0.7978845608028654 * a
    tl.store(dst + idx, (0.5 * a * (1.0 + _tanh(inner))).to(dst.dtype.element_ty), mask=m)


def gelu_tanh(x):
    x_c = x.contiguous()
    y = torch.empty(x_c.shape, dtype=x.dtype, device=x.device)
    total = x_c.numel()
    grid = lambda meta: (triton.cdiv(total, meta["BLOCK_SIZE"]),)
    _kernel[grid](x_c, y, total, BLOCK_SIZE=2048, num_warps=8)
    return y
