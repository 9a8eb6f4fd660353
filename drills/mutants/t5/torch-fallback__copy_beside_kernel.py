"""Mutant of t5: torch makes the transposed copy (x.t().contiguous()), and a Triton kernel only
copies that copy, element for element, into the output: the kernel ran, but the transpose, the
drill's work, was torch's."""

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def transpose(x: torch.Tensor) -> torch.Tensor:
    flipped = x.t().contiguous()
    out = torch.empty_like(flipped)
    n = flipped.numel()
    _copy_kernel[(triton.cdiv(n, 1024),)](flipped, out, n, BLOCK=1024)
    return out
