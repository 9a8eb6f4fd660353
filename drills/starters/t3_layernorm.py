"""T3: LayerNorm and RMSNorm forward, one row per Triton program.

Both normalise over the last dimension; every leading dimension is folded into rows. Load a row
into one block of BLOCK_N lanes (the power of two at or above N), reduce its statistics in fp32,
and write the normalised row back in the input's dtype. LayerNorm also returns the per-row mean
and rstd in float32, which a backward pass would reuse.

Run the tests with `tutor check t3` (add --cpu to use Triton's interpreter).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    x_row_stride,
    y_row_stride,
    n_cols,
    eps,
    BLOCK_N: tl.constexpr,
):
    # TODO: which row is this program's? (tl.program_id(0), as int64 so row * stride cannot
    #       overflow on big tensors)
    # TODO: the lanes 0..BLOCK_N-1 and a mask for the ones inside the row (lane < n_cols)
    # TODO: load the row (padded lanes as 0.0) and convert it to fp32 right away
    # TODO: mean = sum of the row / n_cols (the true length, not BLOCK_N)
    # TODO: x - mean, but 0 on padded lanes (tl.where): there x - mean would be -mean
    # TODO: var = sum((x - mean)^2) / n_cols, then rstd = 1 / sqrt(var + eps)
    # TODO: load weight and bias (fp32), y = (x - mean) * rstd * w + b
    # TODO: store y in y's dtype (y_ptr.dtype.element_ty) with the mask; store this row's mean
    #       and rstd at mean_ptr + row and rstd_ptr + row
    pass


@triton.jit
def _rms_norm_fwd_kernel(
    x_ptr,
    w_ptr,
    y_ptr,
    x_row_stride,
    y_row_stride,
    n_cols,
    eps,
    BLOCK_N: tl.constexpr,
):
    # TODO: row, lanes and mask as in the LayerNorm kernel; load the row as fp32
    # TODO: rstd = 1 / sqrt(sum(x^2) / n_cols + eps) (is a tl.where needed here? why not?)
    # TODO: y = x * rstd * w, stored in y's dtype with the mask
    pass


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """LayerNorm over the last dimension of `x`, with the statistics a backward pass needs.

        mean = sum(x) / N
        var  = sum((x - mean)^2) / N          (biased, as torch.nn.functional.layer_norm)
        rstd = 1 / sqrt(var + eps)
        y    = (x - mean) * rstd * weight + bias

    x: [..., N] float32 / bfloat16 / float16; weight, bias: [N].
    Returns y (x's shape and dtype) and mean, rstd (float32, shape [M], M = x.numel() // N).
    """
    # TODO: check that weight and bias have shape (N,)
    # TODO: view x as [M, N] with x.reshape(-1, N); if its last stride is not 1, make it
    #       contiguous. Its rows may still sit further apart than N: pass x2d.stride(0).
    # TODO: allocate y [M, N] in x's dtype, mean and rstd [M] in float32
    # TODO: BLOCK_N = triton.next_power_of_2(N); num_warps about BLOCK_N // 256, from 1 to 16
    # TODO: launch over a grid of (M,) programs, BLOCK_N and num_warps by keyword
    # TODO: return y in x's shape, mean, rstd
    raise NotImplementedError("TODO: write layer_norm (and its kernel)")


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of `x`.

        rstd = 1 / sqrt(sum(x^2) / N + eps)
        y    = x * rstd * weight

    x: [..., N] float32 / bfloat16 / float16; weight: [N]. Returns y with x's shape and dtype.
    """
    # TODO: the same host steps as layer_norm, without bias, mean and rstd
    raise NotImplementedError("TODO: write rms_norm (and its kernel)")
