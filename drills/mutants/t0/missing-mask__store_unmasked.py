"""Mutant of t0: the loads are masked but the store is not: the last block writes past the end
of the output (the output values themselves are all right)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < n
    x = tl.load(x_ptr + i, mask=ok, other=0.0)
    y = tl.load(y_ptr + i, mask=ok, other=0.0)
    tl.store(o_ptr + i, (x.to(tl.float32) + y.to(tl.float32)).to(o_ptr.dtype.element_ty))


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    xf = x.contiguous().reshape(-1)
    yf = y.contiguous().reshape(-1)
    o = torch.zeros_like(xf)
    _add[(triton.cdiv(xf.numel(), 512),)](xf, yf, o, xf.numel(), BLOCK=512)
    return o.reshape(x.shape)
