"""Drill t5: y = x.T, copied into a new contiguous tensor, with 2-D tiles.

    y[n, m] = x[m, n]        x: [M, N] with any strides; y: [N, M], contiguous

Each program copies one BLOCK_M x BLOCK_N tile of x into the matching BLOCK_N x BLOCK_M tile of
y. Address x through its strides (x may be a transposed or sliced view), and mask the tiles that
hang over the bottom or the right edge.

The lesson is drills/content/t5.md. Check your work with `tutor check t5`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# The tile each program copies, and warps per program.
BLOCK_M = 64
BLOCK_N = 64
NUM_WARPS = 4


@triton.jit
def _transpose_kernel(
    x_ptr,
    y_ptr,
    n_rows,
    n_cols,
    x_row_stride,
    x_col_stride,
    y_row_stride,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Copy the tile of x at this program's rows and columns into y, transposed."""
    # TODO: which tile am I? One program id per grid axis: which one picks x's rows (M),
    #       which one x's columns (N)? (as int64, for large tensors)
    # TODO: offsets_m, offsets_n: the tile's row indices and column indices of x (1-D each).
    # TODO: mask: a [BLOCK_M, BLOCK_N] block that is true where the element is inside x.
    #       Broadcasting: offsets_m[:, None] is a column, offsets_n[None, :] is a row.
    # TODO: load the tile: address of x[m, n] = x_ptr + m * x_row_stride + n * x_col_stride.
    # TODO: store it into y, where x[m, n] goes to y[n, m] (address y_ptr + n * y_row_stride + m).
    #       tl.trans turns a [BLOCK_M, BLOCK_N] block into [BLOCK_N, BLOCK_M] (the mask too).
    pass


def transpose(x: torch.Tensor) -> torch.Tensor:
    """y = x.T as a new contiguous tensor: y[n, m] = x[m, n].

    x: [M, N], float32 / bfloat16, any strides (a transposed or sliced view): read it in place,
    through x.stride(), without copying it first. Returns y: [N, M], contiguous, x's dtype.
    """
    # TODO: allocate y of shape (N, M), x's dtype and device.
    # TODO: grid: two axes, enough tiles to cover x's rows and x's columns (triton.cdiv).
    # TODO: launch with x's strides (what are they for a transposed view?) and y's row stride;
    #       BLOCK_M, BLOCK_N and num_warps by keyword.
    raise NotImplementedError("TODO: write transpose and its kernel")
