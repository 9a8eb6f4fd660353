"""Drill F3: fused_add_rmsnorm and silu_and_mul, two small fused ops of a decoder layer.

fused_add_rmsnorm adds a sublayer's output x into the residual stream and RMS-normalizes the
sum, in one kernel, writing both results in place:

    h        = x + residual                              (in fp32)
    residual <- h                                        (rounded to residual's dtype)
    x        <- h * rsqrt(mean(h**2) + eps) * weight     (from the fp32 h, not the rounded one)

silu_and_mul is the SwiGLU gate: x is [..., 2d], the first half is the gate, the second is up:

    out = silu(gate) * up,    silu(g) = g * sigmoid(g),    out is a new [..., d] tensor

Replace every `# TODO` and delete the `raise NotImplementedError` lines. Run the tests with
`tutor check f3` in a shell where `. .venv/bin/activate` ran (`make` prints it), or save this
file with the app open.
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
    # TODO: this program's row in x and in residual (each tensor has its own row stride),
    #       and the lanes of the block inside it.
    # TODO: h = x + residual in fp32; residual must receive h, in residual's dtype.
    # TODO: RMS-normalise h (which h: the fp32 one or the rounded one?) and write it into x.
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
    """Grid (cdiv(d, BLOCK_SIZE), rows): one program per block of output columns and row."""
    # TODO: this program's row and block of output columns, and the lanes inside the row.
    # TODO: gate and up for those columns (which half is which?), in fp32.
    # TODO: out = silu(gate) * up, stored in out's dtype.
    pass


def fused_add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> None:
    """In place: h = x + residual (fp32); residual <- h; x <- h * rsqrt(mean(h**2) + eps) * weight.

    x and residual are [..., H] with the same shape; weight is [H]. residual receives h rounded
    to its dtype; the norm is computed from the fp32 h, not from that rounded copy. Rows may be
    strided (a slice of a wider buffer), but each row must be contiguous. Returns None.
    """
    # TODO: see x and residual as rows of H without a copy (a copy would hide the writes).
    # TODO: a block that holds a row; one program per row, each tensor's row stride passed.
    raise NotImplementedError("TODO: write fused_add_rmsnorm")


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """out = silu(x[..., :d]) * x[..., d:] for x of shape [..., 2d]; returns a new [..., d].

    The first half is the gate (through silu = g * sigmoid(g)), the second half is up. The
    grid is (cdiv(d, BLOCK), rows) with BLOCK = min(1024, next_power_of_2(d)).
    """
    # TODO: x as rows of 2d values, and a new output of d per row in x's dtype.
    # TODO: enough programs to cover every output column of every row.
    raise NotImplementedError("TODO: write silu_and_mul")
