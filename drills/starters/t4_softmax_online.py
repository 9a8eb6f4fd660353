"""Drill t4: softmax over the last dimension for rows of any length, one program per row.

    softmax(x)[..., j] = exp(x[..., j] - m) / s,   m = max_k x[..., k],
                                                s = sum_k exp(x[..., k] - m)

A row can be far longer than one block (64k columns and more), so the program walks it in
blocks of BLOCK_SIZE columns. BLOCK_SIZE is a tl.constexpr power of two that you choose, at most
4096 (the tests use rows of 8193 to 9999 columns, so that any such block size gives several
blocks, the last one partial; one test has rows that fit in a single block).

Pass 1, the online softmax: keep a running max m and a running sum s of exp(x - m). For each
block, m_new = max(m, max(block)); s = s * exp(m - m_new) + sum(exp(block - m_new)); m = m_new.
Pass 2: read the row again and write exp(x - m) / s. Do the math in float32.

The lesson is drills/content/t4.md. Check your work with `tutor check t4`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_online_kernel(
    x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    """y[row, :] = softmax(x[row, :]) for the row given by tl.program_id(0).

    Row r starts at x_ptr + r * x_row_stride (the stride may be larger than n_cols).
    """
    # TODO: row_idx = tl.program_id(0).to(tl.int64); the row's start in x and in y.
    # TODO: pass 1: start m at -inf and s at 0 (float32 scalars). Loop over every block,
    #       the partial last one included; load it with a mask and an `other=` that can neither
    #       win the max nor add to the sum; update m and s as the docstring says.
    # TODO: while every value seen so far is -inf, m_new is -inf and m - m_new is
    #       -inf - -inf = NaN: guard that case.
    # TODO: pass 2: loop over the blocks again, store exp(x - m) / s with the mask, converted to
    #       y's dtype: .to(y_ptr.dtype.element_ty).
    pass


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of x, for rows of any length.

    x: (..., N), float32 / float16 / bfloat16. Rows may be strided (e.g. x = base[..., :N]):
    pass the row stride to the kernel rather than copying. Only when the last dimension itself
    is strided (x.stride(-1) != 1, e.g. a transpose) copy x with x.contiguous().
    Returns a new tensor of x's shape and dtype.
    """
    # TODO: n_cols = x.shape[-1]; make x contiguous if x.stride(-1) != 1; view it as rows
    #       with x.reshape(-1, n_cols) and allocate y_rows like it.
    # TODO: BLOCK_SIZE: a power of two, at most 4096 (triton.next_power_of_2 helps for short
    #       rows); num_warps 4, or 8 for blocks of 2048 and more.
    # TODO: launch one program per row, passing both row strides and n_cols, and return
    #       y_rows.view(x.shape).
    raise NotImplementedError("TODO: write softmax_online and its kernel")
