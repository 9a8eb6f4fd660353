"""Drill t0: elementwise x + y, your first Triton kernel.

    out[i] = x[i] + y[i]

The kernel sees both tensors as one flat run of n_elements values. A 1-D grid of programs covers
it: program p (tl.program_id(0)) handles the BLOCK_SIZE elements starting at p * BLOCK_SIZE, and
the last program's block runs past the end, so it needs a mask.

The lesson is drills/content/t0.md. Check your work with `tutor check t0`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Elements per program, and warps per program (a warp is 32 threads).
BLOCK_SIZE = 1024
NUM_WARPS = 4


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """out[i] = x[i] + y[i] for the BLOCK_SIZE elements of this program."""
    # TODO: which program am I? (tl.program_id along axis 0; as int64 for huge tensors)
    # TODO: offsets: the indices of this program's block, built from the program id,
    #       BLOCK_SIZE and tl.arange(0, BLOCK_SIZE).
    # TODO: mask: true for the lanes whose offset is inside the tensors.
    # TODO: load x and y with the mask, convert to tl.float32 (the CPU interpreter cannot add
    #       bf16 values), add, and store with the mask, converted to out's dtype:
    #       .to(out_ptr.dtype.element_ty).
    pass


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Elementwise out = x + y.

    x, y: the same shape and dtype (float32 / bfloat16), any layout (contiguous or not).
    Returns a new contiguous tensor of that shape and dtype; add in float32 inside the kernel.
    """
    # TODO: flatten x and y into 1-D tensors whose memory is in order (a transposed view's is
    #       not): what does .contiguous() do, and why .view(-1) after it?
    # TODO: allocate the flat output and count n_elements.
    # TODO: grid: enough programs of BLOCK_SIZE to cover every element (triton.cdiv).
    # TODO: launch _add_kernel[grid](...), BLOCK_SIZE and num_warps by keyword.
    # TODO: return the output in x's shape.
    raise NotImplementedError("TODO: write add and its kernel")
