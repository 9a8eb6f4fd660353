"""Mutant of t0: grid = n // BLOCK_SIZE rounds down, so the last, partial block is never added."""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x_flat = x.contiguous().view(-1)
    y_flat = y.contiguous().view(-1)
    out_flat = torch.empty_like(x_flat)
    n_elements = out_flat.numel()
    grid = (n_elements // BLOCK_SIZE,)
    _add_kernel[grid](x_flat, y_flat, out_flat, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out_flat.view(x.shape)
