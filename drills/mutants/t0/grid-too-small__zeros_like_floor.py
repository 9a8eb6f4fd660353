"""Mutant of t0: the output starts as torch.zeros_like and the grid is n // BLOCK, which rounds
down, so the last, partial block is never written and reads exactly 0."""

import torch
import triton
import triton.language as tl

BLOCK = 256


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, size, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    keep = idx < size
    a = tl.load(a_ptr + idx, mask=keep, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + idx, mask=keep, other=0.0).to(tl.float32)
    tl.store(c_ptr + idx, (a + b).to(c_ptr.dtype.element_ty), mask=keep)


def add(x, y):
    a, b = x.contiguous(), y.contiguous()
    c = torch.zeros_like(a)
    size = a.numel()
    add_kernel[(size // BLOCK,)](a, b, c, size, BLOCK=BLOCK)
    return c
