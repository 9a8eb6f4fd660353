"""Mutant (bf16-no-upcast): x is used in the dtype it was loaded in; no fp32 upcast."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 1024 elements over 4 warps is 8 per thread: one 16-byte load per thread for bf16. The kernel
# is memory-bound, so this only has to keep enough bytes in flight; 64 M elements is 65536
# programs, plenty for every SM.
BLOCK_SIZE = 1024
NUM_WARPS = 4


@triton.jit
def _gelu_tanh_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # int64 so that offsets past 2**31 elements do not wrap around.
    block_start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the last block runs past the end of the tensor

    x = tl.load(x_ptr + offsets, mask=mask)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2/pi) * (x + 0.044715 x^3)
    tanh_z = 2.0 * tl.sigmoid(2.0 * z) - 1.0
    y = 0.5 * x * (1.0 + tanh_z)

    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """GELU, tanh form, elementwise: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))).

    x: any shape, float32 / float16 / bfloat16, contiguous or not.
    Returns a new contiguous tensor of x's shape and dtype. The math is done in float32.
    """
    if not x.is_floating_point():
        raise TypeError(f"gelu_tanh needs a floating-point tensor, got {x.dtype}")
    x_flat = x.contiguous().view(-1)  # a strided view is copied once; the kernel reads 1-D
    y_flat = torch.empty_like(x_flat)
    n_elements = x_flat.numel()
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    _gelu_tanh_kernel[grid](x_flat, y_flat, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS)
    return y_flat.view(x.shape)
