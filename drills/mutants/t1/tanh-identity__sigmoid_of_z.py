"""Mutant of t1: tanh(z) written as 2 * sigmoid(z) - 1 (that is tanh(z / 2))."""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _gelu_tanh_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    block_start = tl.program_id(0) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh_z = 2.0 * tl.sigmoid(z) - 1.0
    y = 0.5 * x * (1.0 + tanh_z)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    x_flat = x.contiguous().view(-1)
    y_flat = torch.empty_like(x_flat)
    n_elements = x_flat.numel()
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    _gelu_tanh_kernel[grid](x_flat, y_flat, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return y_flat.view(x.shape)
