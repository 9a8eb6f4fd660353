"""b1: the row sum divided by N (a mean of dy * y instead of the sum). No named diagnosis."""
from __future__ import annotations
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, y_row_stride, dy_row_stride, dx_row_stride,
                             n_cols, BLOCK_N: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK_N)
    inb = c < n_cols
    p = tl.load(y_ptr + r * y_row_stride + c, mask=inb, other=0.0).to(tl.float32)
    g = tl.load(dy_ptr + r * dy_row_stride + c, mask=inb, other=0.0).to(tl.float32)
    dot = tl.sum(p * g, axis=0) / n_cols            # BUG: mean, not sum
    tl.store(dx_ptr + r * dx_row_stride + c, (p * (g - dot)).to(dx_ptr.dtype.element_ty), mask=inb)


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    assert y.shape == dy.shape
    n = y.shape[-1]
    y = y if y.stride(-1) == 1 else y.contiguous()
    dy = dy if dy.stride(-1) == 1 else dy.contiguous()
    y2 = y.reshape(-1, n)
    g2 = dy.reshape(-1, n)
    out = torch.empty(g2.shape, dtype=dy.dtype, device=dy.device)
    BN = triton.next_power_of_2(n)
    _softmax_backward_kernel[(g2.shape[0],)](
        y2, g2, out, y2.stride(0), g2.stride(0), out.stride(0), n, BLOCK_N=BN, num_warps=4)
    return out.view(dy.shape)
