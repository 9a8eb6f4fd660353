"""Mutant of t1: tanh(z) written as sigmoid(2z) - 1, the factor 2 in front forgotten."""

import torch
import triton
import triton.language as tl


@triton.jit
def tanh_via_sigmoid(z):
    return tl.sigmoid(z + z) - 1.0


@triton.jit
def gelu_fwd(inp, outp, size, TILE: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    ok = i < size
    v = tl.load(inp + i, mask=ok, other=0.0).to(tl.float32)
    poly = v + 0.044715 * (v * v * v)
    th = tanh_via_sigmoid(0.7978845608028654 * poly)
    tl.store(outp + i, (v * 0.5 * (th + 1.0)).to(outp.dtype.element_ty), mask=ok)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    src = x.reshape(-1).contiguous()
    dst = src.new_empty(src.shape)
    gelu_fwd[(triton.cdiv(src.numel(), 4096),)](src, dst, src.numel(), TILE=4096, num_warps=8)
    return dst.reshape(x.shape)
