"""B2: RMSNorm backward, dx row by row and dw as a two-stage reduction across rows.

The forward was y = x * rstd * w with rstd = 1 / sqrt(mean(x^2) + eps), one rstd per row. The
backward needs dx for each row (a row reduction, like the forward) and dw summed over ALL rows:
a reduction across programs. Let each program take a contiguous group of rows, accumulate its
share of dw in fp32, and write it to its own row of a [n_programs, N] buffer; then sum that
buffer over its rows (torch.sum is fine for this second, small stage).

Run the tests with `tutor check b2` (add --cpu to use Triton's interpreter).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_bwd_kernel(
    dy_ptr,
    x_ptr,
    w_ptr,
    rstd_ptr,
    dx_ptr,
    dw_partial_ptr,
    dy_row_stride,
    x_row_stride,
    dx_row_stride,
    n_rows,
    n_cols,
    rows_per_program,
    BLOCK_N: tl.constexpr,
):
    # TODO: this program's rows: row_start = program * rows_per_program, row_end capped at
    #       n_rows (tl.minimum); program id as int64
    # TODO: lanes, mask; load w once (fp32); an fp32 accumulator of BLOCK_N zeros for dw
    # TODO: for each row in the group: load dy and x (fp32) and this row's rstd AS GIVEN
    # TODO:   x_hat = x * rstd; c = mean over the row of dy * w * x_hat (divide by n_cols)
    # TODO:   dx = rstd * (dy * w - x_hat * c), stored in dx's dtype with the mask
    # TODO:   add dy * x_hat to the accumulator
    # TODO: store the accumulator to THIS program's row of dw_partial
    pass


def rms_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of y = x * rstd * weight (RMSNorm over the last dimension) for x and weight.

        x_hat = x * rstd                                   (rstd [M] as given by the forward)
        dx    = rstd * (dy * w - x_hat * mean(dy * w * x_hat))   per row, in x's dtype
        dw    = sum over rows of dy * x_hat                 in fp32, returned in weight's dtype

    dy, x: [M, N] float32 / bfloat16 (rows may be strided); weight: [N]; rstd: [M] float32,
    1 / sqrt(mean(x^2) + eps) from the forward. Use rstd as given: the eps is not passed, and
    recomputing it from x (with another eps, or from the rounded x) gives another gradient.
    """
    # TODO: check shapes; make the columns of x and dy contiguous if they are not
    # TODO: n_programs: a few per SM on the GPU (torch.cuda.get_device_properties), a few on
    #       the CPU, never more than M; rows_per_program = triton.cdiv(M, n_programs)
    # TODO: allocate dx like x and an fp32 [n_programs, N] buffer for the partial dw
    # TODO: launch one program per group; then dw = the buffer summed over its rows, in
    #       weight's dtype
    raise NotImplementedError("TODO: compute dx and dw with a Triton kernel")
