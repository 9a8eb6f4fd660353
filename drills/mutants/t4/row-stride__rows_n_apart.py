"""Mutant of t4: the kernel finds row r at r * n_cols (blocks of 512, a finite start)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(X, Y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    offs = tl.arange(0, BLOCK)
    m = -1e30
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        v = tl.load(X + base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(v, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(v - m_new), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        v = tl.load(X + base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        tl.store(Y + base + cols, (tl.exp(v - m) / s).to(Y.dtype.element_ty), mask=cols < n_cols)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty(rows.shape, dtype=x.dtype, device=x.device)
    _kernel[(rows.shape[0],)](rows, y, n, BLOCK=512)
    return y.view(x.shape)
