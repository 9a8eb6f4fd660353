"""t1: several 64-wide rows per program; the store is masked but the load is not."""
from __future__ import annotations
import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024
NUM_WARPS = 4

COLS = 64


@triton.jit
def _gelu_tanh_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    ROWS: tl.constexpr = BLOCK_SIZE // 64
    r = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)[:, None]
    idx = r * 64 + tl.arange(0, 64)[None, :]
    x = tl.load(x_ptr + idx).to(tl.float32)        # BUG: no mask on the load
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = x * tl.sigmoid(2.0 * z)
    tl.store(y_ptr + idx, y.to(y_ptr.dtype.element_ty), mask=idx < n_elements)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    xf = x.contiguous().view(-1)
    yf = torch.empty_like(xf)
    n = xf.numel()
    _gelu_tanh_kernel[(triton.cdiv(n, BLOCK_SIZE),)](xf, yf, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS)
    return yf.view(x.shape)
