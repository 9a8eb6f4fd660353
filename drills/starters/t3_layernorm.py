"""T3: LayerNorm and RMSNorm forward, one row per Triton program.

Both normalise over the last dimension; every leading dimension is folded into rows. Load a row
into one block of BLOCK_N lanes (the power of two at or above N), reduce its statistics in fp32,
and write the normalised row back in the input's dtype. LayerNorm also returns the per-row mean
and rstd in float32, which a backward pass would reuse.

Run the tests with `tutor check t3` (add --cpu to use Triton's interpreter), in a shell where
`. .venv/bin/activate` ran (`make` prints it), or save this file with the app open.
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
    # TODO: this program's row, and the lanes of the block that lie inside it.
    # TODO: the row's statistics in fp32, over its N values only: what do the padded lanes
    #       add to the variance, and what is the true length?
    # TODO: normalise, scale and shift; store y in its dtype, and this row's mean and rstd.
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
    # TODO: as the LayerNorm kernel, with one statistic (does padding need care here?).
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
    # TODO: see x as M rows of N values without copying it (mind rows that sit further apart
    #       than N), with outputs of the shapes and dtypes above.
    # TODO: a block that holds a row, a warp count that grows with it, one program per row.
    raise NotImplementedError("TODO: write layer_norm (and its kernel)")


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of `x`.

        rstd = 1 / sqrt(sum(x^2) / N + eps)
        y    = x * rstd * weight

    x: [..., N] float32 / bfloat16 / float16; weight: [N]. Returns y with x's shape and dtype.
    """
    # TODO: the same host steps as layer_norm, without bias, mean and rstd
    raise NotImplementedError("TODO: write rms_norm (and its kernel)")
