"""Drill t1: the tanh-approximate GELU as a Triton kernel.

    gelu_tanh(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))

Write tanh through the sigmoid: tanh(z) = 2 * sigmoid(2 * z) - 1 (`tl.sigmoid`).
The kernel sees the tensor as one flat run of n_elements values; each program handles
BLOCK_SIZE of them, and the last program's block runs past the end, so it needs a mask.

The lesson is drills/content/t1.md. Check your work with `tutor check t1` (in a shell where
`. .venv/bin/activate` ran; `make` prints it), or save this file with the app open.
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
    """y[i] = gelu_tanh(x[i]) for the BLOCK_SIZE elements of this program.

    x_ptr, y_ptr: the flat input and output (n_elements values each).
    """
    # TODO: which elements belong to this program, and which of them lie inside the tensor?
    # TODO: load them and compute in float32 (what does bf16 lose in x**3?).
    # TODO: GELU's tanh form, with tanh written through tl.sigmoid (the identity above).
    # TODO: store in y's own dtype, touching no element past the end.
    pass


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """GELU, tanh form, elementwise: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))).

    x: any shape, float32 / float16 / bfloat16, contiguous or not.
    Returns a new tensor of x's shape and dtype. Compute in float32 inside the kernel.
    """
    # TODO: give the kernel one flat run of elements in memory order (what about a transpose?).
    # TODO: an output of the same size, and enough programs to cover every element.
    # TODO: launch the kernel with BLOCK_SIZE and NUM_WARPS, and give the result x's shape.
    raise NotImplementedError("TODO: write gelu_tanh and its kernel")
