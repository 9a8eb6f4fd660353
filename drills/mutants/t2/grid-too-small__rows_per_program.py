"""Mutant of t2: three rows per program and a grid of M // 3 programs, which rounds down: the
last M % 3 rows are never computed."""

import torch
import triton
import triton.language as tl

ROWS = 3


@triton.jit
def _softmax_rows(x_ptr, y_ptr, x_stride, y_stride, n_rows, n_cols,
                  ROWS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for i in range(ROWS):
        row = tl.program_id(0).to(tl.int64) * ROWS + i
        mask = (cols < n_cols) & (cols * 0 + row < n_rows)
        x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * y_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n = x.shape[-1]
    rows = x.contiguous().view(-1, n)
    out = torch.empty_like(rows)
    m = rows.shape[0]
    _softmax_rows[(m // ROWS,)](rows, out, rows.stride(0), out.stride(0), m, n,
                                ROWS=ROWS, BLOCK=triton.next_power_of_2(n))
    return out.view(x.shape)
