"""Drill t2: softmax over the last dimension as a Triton kernel, one program per row.

    softmax(x)[..., j] = exp(x[..., j] - m) / sum_k exp(x[..., k] - m),   m = max_k x[..., k]

x has shape (..., N). The wrapper sees it as R rows of N values and launches one program per
row. A program loads its row into BLOCK_N = next_power_of_2(N) lanes; the lanes past N are
padding and must be loaded as -inf. Do the math in float32.

The lesson is drills/content/t2.md. Check your work with `tutor check t2` (in a shell where
`. .venv/bin/activate` ran; `make` prints it), or save this file with the app open.
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
    # TODO: which row is this program's, and which lanes of the block hold its N values?
    # TODO: load the row in float32; what must the padded lanes hold so that they change
    #       neither the max nor the sum?
    # TODO: make exp safe for rows near +1000 or -1000 (softmax does not change when the
    #       same number is subtracted from a whole row).
    # TODO: normalise, and store in y's dtype without touching the padded lanes.
    pass


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of x, any number of leading dims.

    x: (..., N), float32 / float16 / bfloat16. Rows may be strided (e.g. x = base[..., :N]):
    pass the row stride to the kernel rather than copying. Only when the last dimension itself
    is strided (x.stride(-1) != 1, e.g. a transpose) copy x with x.contiguous().
    Returns a new tensor of x's shape and dtype.
    """
    # TODO: see x as rows of N values without copying (a row-sliced x keeps its row stride);
    #       copy only when the last dimension itself is strided.
    # TODO: an output of the same shape and dtype, a power-of-two block that holds a row,
    #       and a warp count that grows with it.
    # TODO: one program per row; pass each tensor's row stride to the kernel.
    raise NotImplementedError("TODO: write softmax and its kernel")
