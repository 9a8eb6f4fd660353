"""Drill t1: the tanh-approximate GELU as a Triton kernel.

    gelu_tanh(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))

Write tanh through the sigmoid: tanh(z) = 2 * sigmoid(2 * z) - 1 (`tl.sigmoid`).
The kernel sees the tensor as one flat run of n_elements values; each program handles
BLOCK_SIZE of them, and the last program's block runs past the end, so it needs a mask.

The lesson is drills/content/t1.md. Check your work with `tutor check t1`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Elements per program, and warps per program (a warp is 32 threads).
BLOCK_SIZE = 1024
NUM_WARPS = 4


@triton.jit
def _gelu_tanh_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """y[i] = gelu_tanh(x[i]) for the BLOCK_SIZE elements of this program."""
    # TODO: offsets = this program's first element (tl.program_id(0) * BLOCK_SIZE)
    #       + tl.arange(0, BLOCK_SIZE).
    # TODO: mask = offsets < n_elements: true for the lanes that are inside the tensor.
    # TODO: load x with the mask, then .to(tl.float32) before any arithmetic
    #       (bf16 has 8 bits of precision, and the CPU interpreter cannot compute in it).
    # TODO: z = sqrt(2/pi) * (x + 0.044715 * x * x * x); sqrt(2/pi) = 0.7978845608028654.
    # TODO: tanh_z = 2 * tl.sigmoid(2 * z) - 1.
    # TODO: y = 0.5 * x * (1 + tanh_z); store it with the mask, converted to y's dtype:
    #       y.to(y_ptr.dtype.element_ty).
    pass


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """GELU, tanh form, elementwise: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))).

    x: any shape, float32 / float16 / bfloat16, contiguous or not.
    Returns a new tensor of x's shape and dtype. Compute in float32 inside the kernel.
    """
    # TODO: x_flat = x.contiguous().view(-1): the kernel walks memory in order, so a strided
    #       view (e.g. a transpose) must be copied first.
    # TODO: y_flat = torch.empty_like(x_flat); n_elements = x_flat.numel().
    # TODO: grid = (triton.cdiv(n_elements, BLOCK_SIZE),): enough programs to cover every element.
    # TODO: launch: _gelu_tanh_kernel[grid](x_flat, y_flat, n_elements,
    #                                       BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS)
    # TODO: return y_flat.view(x.shape).
    raise NotImplementedError("TODO: write gelu_tanh and its kernel")
