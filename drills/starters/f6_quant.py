"""F6: per-token (per-row) symmetric int8 quantization, one row per Triton program.

Each row t of x gets its own scale, scale[t] = amax[t] / 127 with amax[t] = max |x[t, :]|, and
q[t, :] = round(x[t, :] / scale[t]) clamped to [-127, 127]. Load a row into one block of BLOCK_H
lanes (the power of two at or above H), reduce its amax in fp32, and write the row back as int8
with its float32 scale.

Run the tests with `tutor check f6` (add --cpu to use Triton's interpreter).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

QMAX = 127.0  # int8 is symmetric here: -127..127
AMAX_MIN = 1e-10  # a row's amax is raised to at least this (a row of zeros must not give NaN)


@triton.jit
def _quant_per_token_kernel(
    x_ptr,
    q_ptr,
    scale_ptr,
    x_row_stride,
    q_row_stride,
    n_cols,
    amax_ub,
    QMAX: tl.constexpr,
    AMAX_MIN: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    # TODO: this program's row (tl.program_id(0) as int64), the lanes and their mask
    # TODO: load the row (padded lanes as 0.0) and convert it to fp32 right away
    # TODO: amax = the largest MAGNITUDE in the row; cap it at amax_ub, then raise it to at
    #       least AMAX_MIN (why must a row of zeros not give amax = 0?)
    # TODO: scale = amax / QMAX; v = x / scale
    # TODO: can |v| exceed QMAX? (look at amax_ub) Make sure it cannot before the cast
    # TODO: .to(tl.int8) truncates toward zero: round to nearest first (ties away from zero)
    # TODO: store q with the mask, and this row's scale at scale_ptr + row
    pass


def quant_per_token(
    x: torch.Tensor, amax_ub: float | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 quantization of each row of `x`, with one float32 scale per row.

        amax[t]  = max(min(max_h |x[t, h]|, amax_ub), 1e-10)
        scale[t] = amax[t] / 127                                   (float32)
        q[t, h]  = round(clamp(x[t, h] / scale[t], -127, 127))     (int8, ties away from 0)

    x: [T, H] float32 / bfloat16 / float16, rows may be strided (unit column stride).
    amax_ub: an optional upper bound on amax (vLLM's scale_ub): entries past it saturate.
    Returns q (int8, [T, H], contiguous) and scale (float32, [T]); x ~ q * scale[:, None].
    """
    # TODO: check x is 2-D; make its columns contiguous if they are not
    # TODO: allocate q (int8, [T, H]) and scale (float32, [T]) on x's device
    # TODO: BLOCK_H = triton.next_power_of_2(H); one program per row; pass amax_ub as a float
    #       (inf when None), the constexprs and num_warps by keyword
    raise NotImplementedError("TODO: quantize each row with a Triton kernel")
