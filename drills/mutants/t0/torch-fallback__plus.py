"""Mutant of t0: the kernel is written but never launched; torch adds the tensors."""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # "First make the tests pass": the launch never came back.
    # _add_kernel[grid](x_flat, y_flat, out_flat, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return x + y
