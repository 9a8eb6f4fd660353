"""Reference solution for drill t0: elementwise x + y, the first Triton kernel of the course.

    out[i] = x[i] + y[i]

The wrapper flattens both tensors into one run of n_elements values in memory order; a 1-D grid
of cdiv(n_elements, BLOCK_SIZE) programs covers it, program p owning the elements
p * BLOCK_SIZE ... p * BLOCK_SIZE + BLOCK_SIZE - 1, and the mask switches off the lanes of the
last block that lie past the end.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 1024 elements over 4 warps (128 threads) is 8 per thread: one 16-byte load per thread for
# bf16. The kernel is memory-bound; at 64 M elements this is 65536 programs, enough to keep
# every SM busy (Triton's vector-add tutorial uses the same block).
BLOCK_SIZE = 1024
NUM_WARPS = 4


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # int64 so that offsets past 2**31 elements do not wrap around.
    pid = tl.program_id(0).to(tl.int64)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # this program's block
    mask = offsets < n_elements  # the last block runs past the end of the tensors

    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Elementwise out = x + y.

    x, y: the same shape and dtype (float32 / bfloat16), any layout (contiguous or not).
    Returns a new contiguous tensor of that shape and dtype; the sum is taken in float32.
    """
    if x.shape != y.shape or x.dtype != y.dtype:
        raise ValueError(
            f"add needs equal shapes and dtypes, got {x.shape} {x.dtype} and {y.shape} {y.dtype}"
        )
    if x.device != y.device:
        raise ValueError(f"x is on {x.device} and y on {y.device}")
    # The kernel walks memory in order: a strided view (a transpose) is copied once first.
    x_flat = x.contiguous().view(-1)
    y_flat = y.contiguous().view(-1)
    out_flat = torch.empty_like(x_flat)
    n_elements = out_flat.numel()
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    _add_kernel[grid](
        x_flat, y_flat, out_flat, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS
    )
    return out_flat.view(x.shape)
