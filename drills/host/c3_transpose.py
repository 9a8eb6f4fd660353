"""The host side of drill c3: checks the input, allocates y, and launches the learner's
transpose_kernel on a 2-D grid of 32 x 32 tiles, blocks of 32 x 8 threads."""

from __future__ import annotations

import torch

TILE = 32  # the tile a block moves: TILE x TILE elements
ROWS = 8  # blockDim.y: each thread moves TILE / ROWS rows of the tile


def transpose(kernels, x: torch.Tensor) -> torch.Tensor:
    """y = x.T as a new contiguous tensor [N, M], for x [M, N] in bf16 whose columns are next
    to each other in memory (any row stride)."""
    if x.dtype != torch.bfloat16:
        raise ValueError(f"x must be bfloat16, got {x.dtype}")
    if x.dim() != 2 or x.stride(1) != 1:
        raise ValueError("x must be 2-D [M, N] with unit column stride")
    n_rows, n_cols = x.shape
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y  # no tile to move (a grid of 0 blocks cannot launch)
    kernels.transpose_kernel(
        # blockIdx.x walks x's columns (y's rows), blockIdx.y x's rows; rounded up, so the
        # last tiles of each axis hang over the edge
        (-(-n_cols // TILE), -(-n_rows // TILE)),
        (TILE, ROWS),
        (y, x, n_rows, n_cols, x.stride(0), y.stride(0)),
    )
    return y
