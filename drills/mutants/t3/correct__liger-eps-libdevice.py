"""t3 in Liger-Kernel's style: row pointers advanced once, `eps.to(tl.float32)` on the float
argument, rsqrt from libdevice, the mean and rstd cached for the backward pass."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _layer_norm_forward_kernel(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, B_ptr, Mean_ptr, RSTD_ptr,
    n_cols, eps, BLOCK_SIZE: tl.constexpr,
):  # fmt: skip
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_ptr += row_idx * X_row_stride
    Y_ptr += row_idx * Y_row_stride
    eps = eps.to(tl.float32)

    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(X_row, axis=0) / n_cols
    X_centered = tl.where(mask, X_row - mean, 0.0)
    var = tl.sum(X_centered * X_centered, axis=0) / n_cols
    rstd = libdevice.rsqrt(var + eps)
    tl.store(Mean_ptr + row_idx, mean)
    tl.store(RSTD_ptr + row_idx, rstd)

    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    B_row = tl.load(B_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    Y_row = X_centered * rstd * W_row + B_row
    tl.store(Y_ptr + col_offsets, Y_row.to(Y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr
):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0.0)
    X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = libdevice.rsqrt(mean_square + eps.to(tl.float32))
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    Y_row = X_row * rstd * W_row
    out = Y_ptr + row_idx * Y_row_stride + col_offsets
    tl.store(out, Y_row.to(Y_ptr.dtype.element_ty), mask=mask)


def _as_rows(X: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    n_cols = X.shape[-1]
    if weight.shape != (n_cols,):
        raise ValueError(f"weight must have shape ({n_cols},)")
    X_2d = X.reshape(-1, n_cols)
    return X_2d if X_2d.stride(-1) == 1 else X_2d.contiguous()


def _warps(block_size: int) -> int:
    return 4 if block_size <= 2048 else 8


def layer_norm(X, W, B, eps=1e-5):
    X_2d = _as_rows(X, W)
    _as_rows(X, B)
    n_rows, n_cols = X_2d.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    Mean = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    RSTD = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    _layer_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X_2d, X_2d.stride(0), W.contiguous(), B.contiguous(), Mean, RSTD,
        n_cols, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=_warps(BLOCK_SIZE),
    )  # fmt: skip
    return Y.view(X.shape), Mean, RSTD


def rms_norm(X, W, eps=1e-6):
    X_2d = _as_rows(X, W)
    n_rows, n_cols = X_2d.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    _rms_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X_2d, X_2d.stride(0), W.contiguous(), n_cols, eps,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=_warps(BLOCK_SIZE),
    )  # fmt: skip
    return Y.view(X.shape)
