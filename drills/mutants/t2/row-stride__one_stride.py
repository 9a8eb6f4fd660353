"""Mutant of t2: one row stride for both tensors, taken from x. Right while x is contiguous;
for a row-sliced x the rows of y are stored too far apart (holes, and rows past y's end)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, row_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    numerator = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row * row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    y = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    _softmax_kernel[(x2.shape[0],)](x2, y, x2.stride(0), n_cols, BLOCK_N=block, num_warps=4)
    return y.view(x.shape)
