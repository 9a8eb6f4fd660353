"""Mutant of b1: a [2, BLOCK_N] tile per program, the 2 written into the kernel (no ROWS
argument), and a grid of n_rows // 2 programs: with an odd row count the last row is never
written."""

import torch
import triton
import triton.language as tl


@triton.jit
def _pair_kernel(y_ptr, dy_ptr, dx_ptr, y_stride, dy_stride, dx_stride, n_rows, n_cols,
                 BLOCK_N: tl.constexpr):
    pair = tl.program_id(0).to(tl.int64)
    rows = 2 * pair + tl.arange(0, 2)
    lanes = tl.arange(0, BLOCK_N)
    inside = (rows[:, None] < n_rows) & (lanes[None, :] < n_cols)
    y = tl.load(y_ptr + rows[:, None] * y_stride + lanes[None, :], mask=inside, other=0.0)
    g = tl.load(dy_ptr + rows[:, None] * dy_stride + lanes[None, :], mask=inside, other=0.0)
    y = y.to(tl.float32)
    g = g.to(tl.float32)
    dx = y * (g - tl.sum(y * g, axis=1)[:, None])
    tl.store(dx_ptr + rows[:, None] * dx_stride + lanes[None, :],
             dx.to(dx_ptr.dtype.element_ty), mask=inside)


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    n = y.shape[-1]
    y2 = (y if y.stride(-1) == 1 else y.contiguous()).reshape(-1, n)
    d2 = (dy if dy.stride(-1) == 1 else dy.contiguous()).reshape(-1, n)
    dx = torch.empty(d2.shape, dtype=dy.dtype, device=dy.device)
    block = max(16, triton.next_power_of_2(n))
    _pair_kernel[(d2.shape[0] // 2,)](
        y2, d2, dx, y2.stride(0), d2.stride(0), dx.stride(0), d2.shape[0], n, BLOCK_N=block)
    return dx.view(dy.shape)
