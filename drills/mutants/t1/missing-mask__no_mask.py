"""Mutant of t1: no mask at all, so the last block loads and stores past the end."""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _gelu_tanh_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets).to(tl.float32)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh_z = 2.0 * tl.sigmoid(2.0 * z) - 1.0
    y = 0.5 * x * (1.0 + tanh_z)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty))


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    x_flat = x.contiguous().view(-1)
    y_flat = torch.empty_like(x_flat)
    n_elements = x_flat.numel()
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    _gelu_tanh_kernel[grid](x_flat, y_flat, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return y_flat.view(x.shape)
