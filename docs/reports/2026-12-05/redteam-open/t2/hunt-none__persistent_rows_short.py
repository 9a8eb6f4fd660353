"""Mistake: a persistent kernel (2 programs, 2 rows per step) walks its row groups with range(pid, cdiv(n_rows, ROWS) - 1, NPROG): one group short, so the last 1-2 rows are never written. The grid matches the loop."""
import torch
import triton
import triton.language as tl

ROWS = 2
LOG2E = 1.4426950408889634


@triton.jit
def _rowwise_softmax(x, LOG2E: tl.constexpr):
    z = (x - tl.max(x, axis=1)[:, None]) * LOG2E
    e = tl.exp2(z)
    return e / tl.sum(e, axis=1)[:, None]


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_rows, n_cols, ROWS: tl.constexpr, BLOCK_N: tl.constexpr, LOG2E: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    for g in range(tl.program_id(0), tl.cdiv(n_rows, ROWS) - 1, 2):
        rows = g.to(tl.int64) * ROWS + tl.arange(0, ROWS)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        x = tl.where((rows < n_rows)[:, None], x, 0.0)
        y = _rowwise_softmax(x, LOG2E)
        tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    if x.stride(-1) != 1:
        x = x.contiguous()
    x_rows = x.reshape(-1, n_cols)
    n_rows = x_rows.shape[0]
    y_rows = torch.empty(x_rows.shape, dtype=x.dtype, device=x.device)
    _softmax_kernel[(2,)](x_rows, y_rows, x_rows.stride(0), y_rows.stride(0), n_rows, n_cols,
                                                  ROWS=ROWS, BLOCK_N=triton.next_power_of_2(n_cols), LOG2E=LOG2E)
    return y_rows.view(x.shape)
