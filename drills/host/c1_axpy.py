"""The host side of drill c1: checks x and y, and launches the learner's axpy_kernel in blocks
of 256 threads over a grid that does not depend on n: the tests name a few blocks, the bench
takes enough to fill the GPU once. Whenever n is larger than the grid's threads, only a
grid-stride loop updates every element."""

from __future__ import annotations

import torch

BLOCK = 256  # threads in a block
BLOCKS_PER_SM = 8  # 8 x 256 = 2048 threads, as many as an SM of an H100 or H200 holds
CPU_BLOCKS = 4  # the grid on the CPU, where blocks run one after another


def _default_blocks(device: torch.device) -> int:
    """The grid when a call names none: every SM full once on a GPU, a few blocks on the CPU."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count * BLOCKS_PER_SM
    return CPU_BLOCKS


def axpy(kernels, a: float, x: torch.Tensor, y: torch.Tensor, blocks: int | None = None):
    """y = a * x + y, in place, for contiguous bf16 x and y of one shape (any number of
    elements); returns y. `blocks`: the grid, in blocks of 256 threads (_default_blocks when
    None)."""
    if x.dtype != torch.bfloat16 or y.dtype != torch.bfloat16:
        raise ValueError(f"x and y must be bfloat16, got {x.dtype} and {y.dtype}")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have one shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    if not (x.is_contiguous() and y.is_contiguous()):
        raise ValueError("x and y must be contiguous")
    grid = _default_blocks(y.device) if blocks is None else blocks
    kernels.axpy_kernel((grid,), (BLOCK,), (y, x, float(a), y.numel()))
    return y
