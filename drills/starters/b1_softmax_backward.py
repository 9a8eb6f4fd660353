"""Drill b1: the backward pass of softmax over the last dimension, one program per row.

    dx[..., j] = y[..., j] * (dy[..., j] - sum_k dy[..., k] * y[..., k])

y = softmax(x) is the forward's output, dy the gradient flowing back into y, both of shape
(..., N). The wrapper sees them as R rows of N values and launches one program per row. A
program loads its row of y and of dy into BLOCK_N = next_power_of_2(N) lanes, reduces dy * y
to one number, and uses it in an elementwise step. The lanes past N are padding: choose what
they load so that they add nothing to the row sum. Do the math in float32; dx has dy's dtype.

The lesson is drills/content/b1.md. Check your work with `tutor check b1`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_backward_kernel(
    y_ptr,
    dy_ptr,
    dx_ptr,
    y_row_stride,
    dy_row_stride,
    dx_row_stride,
    n_cols,
    BLOCK_N: tl.constexpr,
):
    """dx[row, :] for the row given by tl.program_id(0).

    Row r of y starts at y_ptr + r * y_row_stride; dy and dx have their own row strides.
    """
    # TODO: row_idx = tl.program_id(0).to(tl.int64); offsets = tl.arange(0, BLOCK_N) and a
    #       mask for the lanes inside the row.
    # TODO: load the rows of y and dy with the mask and an `other=` that adds nothing to
    #       sum(dy * y); then .to(tl.float32).
    # TODO: the row sum (tl.sum(..., axis=0)), then the elementwise step of the formula.
    # TODO: store dx with the mask, converted to dx's dtype: .to(dx_ptr.dtype.element_ty).
    pass


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """The gradient of softmax over the last dimension: dx = y * (dy - sum(dy * y, dim=-1)).

    y: (..., N), the forward's output softmax(x); dy: the same shape. float32 / float16 /
    bfloat16. Rows may be strided (e.g. y = base[..., :N]), and y and dy may have different
    row strides: pass each one to the kernel. Only when the last dimension itself is strided
    (stride(-1) != 1) copy that tensor with .contiguous().
    Returns dx, a new tensor of y's shape in dy's dtype.
    """
    # TODO: check that y and dy have the same shape; n_cols = y.shape[-1].
    # TODO: make each tensor contiguous if its stride(-1) != 1, then view both as rows with
    #       .reshape(-1, n_cols); allocate dx_rows like dy_rows (dtype=dy.dtype).
    # TODO: BLOCK_N = triton.next_power_of_2(n_cols); num_warps 4 for BLOCK_N up to 1024,
    #       8 up to 4096, 16 above.
    # TODO: launch one program per row with the three row strides, and return
    #       dx_rows.view(dy.shape).
    raise NotImplementedError("TODO: write softmax_backward and its kernel")
