"""Drill t2: softmax over the last dimension as a Triton kernel, one program per row.

    softmax(x)[..., j] = exp(x[..., j] - m) / sum_k exp(x[..., k] - m),   m = max_k x[..., k]

x has shape (..., N). The wrapper sees it as R rows of N values and launches one program per
row. A program loads its row into BLOCK_N = next_power_of_2(N) lanes; the lanes past N are
padding and must be loaded as -inf. Do the math in float32.

The lesson is drills/content/t2.md. Check your work with `tutor check t2`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_N: tl.constexpr):
    """y[row, :] = softmax(x[row, :]) for the row given by tl.program_id(0).

    Row r starts at x_ptr + r * x_row_stride (the stride may be larger than n_cols).
    """
    # TODO: row_idx = tl.program_id(0).to(tl.int64) (row_idx * stride may pass 2**31).
    # TODO: cols = tl.arange(0, BLOCK_N); mask = cols < n_cols.
    # TODO: load the row with mask=mask and an `other=` value for the padded lanes that can
    #       neither win the max nor add to the sum; then .to(tl.float32).
    # TODO: subtract the row max (tl.max(..., axis=0)) before tl.exp: exp(89) is already
    #       inf in float32.
    # TODO: divide by the sum (tl.sum(..., axis=0)) and store with the mask, converted to
    #       y's dtype: .to(y_ptr.dtype.element_ty).
    pass


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of x, any number of leading dims.

    x: (..., N), float32 / float16 / bfloat16. Rows may be strided (e.g. x = base[..., :N]):
    pass the row stride to the kernel rather than copying. Only when the last dimension itself
    is strided (x.stride(-1) != 1, e.g. a transpose) copy x with x.contiguous().
    Returns a new tensor of x's shape and dtype.
    """
    # TODO: n_cols = x.shape[-1]; make x contiguous if x.stride(-1) != 1.
    # TODO: x_rows = x.reshape(-1, n_cols): the rows as a 2-D view (R, N); its stride(0) is
    #       the row stride.
    # TODO: y_rows = torch.empty(x_rows.shape, dtype=x.dtype, device=x.device).
    # TODO: BLOCK_N = triton.next_power_of_2(n_cols); num_warps 4 for BLOCK_N up to 1024,
    #       8 up to 4096, 16 above.
    # TODO: launch _softmax_kernel[(rows,)](x_rows, y_rows, x_rows.stride(0), y_rows.stride(0),
    #       n_cols, BLOCK_N=BLOCK_N, num_warps=...) and return y_rows.view(x.shape).
    raise NotImplementedError("TODO: write softmax and its kernel")
