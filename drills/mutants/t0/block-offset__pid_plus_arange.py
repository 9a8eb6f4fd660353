"""Mutant of t0: offsets = pid + arange, so program p starts at element p, not p * BLOCK.

The programs overlap: together they cover only the first BLOCK + grid - 1 elements.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _block_indices(pid, BLOCK: tl.constexpr):
    return pid + tl.arange(0, BLOCK)


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    idx = _block_indices(tl.program_id(0), BLOCK)
    inside = idx < n
    a = tl.load(a_ptr + idx, mask=inside, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + idx, mask=inside, other=0.0).to(tl.float32)
    tl.store(c_ptr + idx, (a + b).to(c_ptr.dtype.element_ty), mask=inside)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a = x.reshape(-1)
    b = y.reshape(-1)
    c = torch.empty(a.shape, dtype=x.dtype, device=x.device)
    block = 512
    _add[(triton.cdiv(a.numel(), block),)](a, b, c, a.numel(), BLOCK=block, num_warps=4)
    return c.reshape(x.shape)
