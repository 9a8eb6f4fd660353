"""Mutant of b1: four rows per program, and the grid rounds the row count down, so the
last rows (3 of 3, or 2 of 6) are never written."""

import torch
import triton
import triton.language as tl

ROWS = 4


@triton.jit
def _kernel(y_ptr, dy_ptr, dx_ptr, sy, sdy, sdx, n_rows, n_cols, ROWS: tl.constexpr,
            BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    y = tl.load(y_ptr + rows[:, None] * sy + cols[None, :], mask=mask, other=float("-inf"))
    dy = tl.load(dy_ptr + rows[:, None] * sdy + cols[None, :], mask=mask, other=float("-inf"))
    y = tl.where(mask, y.to(tl.float32), 0.0)
    dy = tl.where(mask, dy.to(tl.float32), 0.0)
    dot = tl.sum(y * dy, axis=1)
    dx = y * (dy - dot[:, None])
    tl.store(dx_ptr + rows[:, None] * sdx + cols[None, :], dx.to(dx_ptr.dtype.element_ty),
             mask=mask)


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    n = y.shape[-1]
    y2 = (y if y.stride(-1) == 1 else y.contiguous()).reshape(-1, n)
    d2 = (dy if dy.stride(-1) == 1 else dy.contiguous()).reshape(-1, n)
    dx = torch.empty(d2.shape, dtype=dy.dtype, device=dy.device)
    _kernel[(d2.shape[0] // ROWS,)](
        y2, d2, dx, y2.stride(0), d2.stride(0), dx.stride(0), d2.shape[0], n,
        ROWS=ROWS, BLOCK_N=triton.next_power_of_2(n), num_warps=4)
    return dx.view(dy.shape)
