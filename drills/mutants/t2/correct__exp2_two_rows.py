"""A correct t2 written differently: two rows per program (a [2, BLOCK_N] tile), exp through
exp2, a cdiv grid and a row mask for the odd last program. Must pass with no diagnosis."""

import torch
import triton
import triton.language as tl

ROWS = 2
LOG2E = tl.constexpr(1.4426950408889634)  # a plain float global would not compile on a GPU


@triton.jit
def _softmax_two_rows(x_ptr, y_ptr, x_stride, y_stride, n_rows, n_cols,
                      ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * x_stride + cols[None, :], mask=mask,
                other=-float("inf")).to(tl.float32)
    row_max = tl.max(x, axis=1)
    e = tl.exp2((x - row_max[:, None]) * LOG2E)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + rows[:, None] * y_stride + cols[None, :], y.to(y_ptr.dtype.element_ty),
             mask=mask)


def softmax(x):
    n = x.shape[-1]
    x2 = x if x.stride(-1) == 1 else x.contiguous()
    x2 = x2.reshape(-1, n)
    y = torch.empty((x2.shape[0], n), dtype=x.dtype, device=x.device)
    m = x2.shape[0]
    _softmax_two_rows[(triton.cdiv(m, ROWS),)](x2, y, x2.stride(0), y.stride(0), m, n,
                                               ROWS=ROWS, BLOCK_N=triton.next_power_of_2(n))
    return y.view(x.shape)
