"""Mutant of t2: the kernel is written but never launched; torch computes the result."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_N: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row_idx * x_row_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    numerator = tl.exp(x - tl.max(x, axis=0))
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row_idx * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    # "Just to check the tests first": the kernel launch below was never switched back on.
    # _softmax_kernel[(rows,)](...)
    return torch.softmax(x.float(), dim=-1).to(x.dtype)
