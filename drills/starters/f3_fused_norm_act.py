"""Drill F3: fused_add_rmsnorm and silu_and_mul, two small fused ops of a decoder layer.

fused_add_rmsnorm adds a sublayer's output x into the residual stream and RMS-normalizes the
sum, in one kernel, writing both results in place:

    h        = x + residual                              (in fp32)
    residual <- h                                        (rounded to residual's dtype)
    x        <- h * rsqrt(mean(h**2) + eps) * weight     (from the fp32 h, not the rounded one)

silu_and_mul is the SwiGLU gate: x is [..., 2d], the first half is the gate, the second is up:

    out = silu(gate) * up,    silu(g) = g * sigmoid(g),    out is a new [..., d] tensor

Replace every `# TODO` and delete the `raise NotImplementedError` lines. Run the tests with
`tutor check f3`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _fused_add_rmsnorm_kernel(
    x_ptr,
    residual_ptr,
    weight_ptr,
    x_row_stride,
    residual_row_stride,
    n_cols,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    """One program per row; the whole row (n_cols <= BLOCK_SIZE) sits in registers."""
    # TODO: row_idx = this program's row, as int64 (row * stride can pass 2**31 elements).
    # TODO: offsets over the block and a mask for the columns < n_cols.
    # TODO: pointers to the start of this row in x and in residual (each has its own stride).
    # TODO: load x and residual (other=0.0 on padded lanes), upcast to fp32, h = x + residual.
    # TODO: store h into residual, converted to residual_ptr.dtype.element_ty.
    # TODO: rstd from the fp32 h still in registers: 1 / sqrt(sum(h*h) / n_cols + eps).
    # TODO: load weight, store h * rstd * weight into x (converted to x's dtype).
    pass


@triton.jit
def _silu_and_mul_kernel(
    x_ptr,
    out_ptr,
    x_row_stride,
    out_row_stride,
    d,
    BLOCK_SIZE: tl.constexpr,
):
    """Grid (rows, cdiv(d, BLOCK_SIZE)): one program per row and block of output columns."""
    # TODO: row_idx from program_id(0) (int64); this block's column offsets from program_id(1).
    # TODO: mask the columns >= d.
    # TODO: load gate from the first half (column c) and up from the second (column d + c),
    #       both upcast to fp32.
    # TODO: store gate * sigmoid(gate) * up into out's row, in out's dtype.
    pass


def fused_add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> None:
    """In place: h = x + residual (fp32); residual <- h; x <- h * rsqrt(mean(h**2) + eps) * weight.

    x and residual are [..., H] with the same shape; weight is [H]. residual receives h rounded
    to its dtype; the norm is computed from the fp32 h, not from that rounded copy. Rows may be
    strided (a slice of a wider buffer), but each row must be contiguous. Returns None.
    """
    # TODO: flatten x and residual to [rows, H] with .view (not reshape: see the lesson).
    # TODO: BLOCK_SIZE = triton.next_power_of_2(H); launch one program per row, passing each
    #       tensor's row stride, BLOCK_SIZE and num_warps by keyword.
    raise NotImplementedError("TODO: write fused_add_rmsnorm")


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """out = silu(x[..., :d]) * x[..., d:] for x of shape [..., 2d]; returns a new [..., d].

    The first half is the gate (through silu = g * sigmoid(g)), the second half is up. The
    grid is (rows, cdiv(d, BLOCK)) with BLOCK = min(1024, next_power_of_2(d)).
    """
    # TODO: flatten x to [rows, 2d]; allocate out of shape [..., d] in x's dtype.
    # TODO: launch the 2-D grid and return out.
    raise NotImplementedError("TODO: write silu_and_mul")
