"""Mutant of t1: the exact GELU with erf, where the tanh form was asked for."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    v = tl.load(x_ptr + offs, mask=inside).to(tl.float32)
    # 0.5 * x * (1 + erf(x / sqrt(2)))
    out = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=inside)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    flat = x.contiguous().reshape(-1)
    out = torch.empty_like(flat)
    n = flat.numel()
    _gelu_kernel[(triton.cdiv(n, 512),)](flat, out, n, BLOCK=512, num_warps=4)
    return out.reshape(x.shape)
