"""The host side of drill c2: checks the inputs, allocates, and launches the learner's
rms_norm_kernel with one block per row."""

from __future__ import annotations

import torch

WARP = 32
VEC = 8  # bf16 values in one 16-byte load
MAX_THREADS = 1024  # CUDA's limit for one block


def _threads_for(n_cols: int) -> int:
    """Whole warps, one thread for each 8 columns (one 16-byte load each, as FlashInfer's
    RMSNorm launches), at most 1024: a row of 4096 gets 512 threads, one of 1000 gets 128."""
    vectors = -(-n_cols // VEC)
    return min(MAX_THREADS, max(WARP, -(-vectors // WARP) * WARP))


def rms_norm(kernels, x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """y = x / sqrt(mean(x^2, last dim) + eps) * weight, for x [..., N] with unit column stride."""
    if x.shape[-1] != weight.shape[0] or x.stride(-1) != 1 or weight.stride(0) != 1:
        raise ValueError("x [..., N] with unit column stride, and weight [N], are required")
    rows = x.reshape(-1, x.shape[-1]) if x.dim() != 2 else x
    y = torch.empty(rows.shape, dtype=x.dtype, device=x.device)
    n_rows, n_cols = rows.shape
    kernels.rms_norm_kernel(
        (n_rows,),
        (_threads_for(n_cols),),
        (y, rows, weight, n_cols, rows.stride(0), y.stride(0), eps),
    )
    return y.reshape(x.shape)
