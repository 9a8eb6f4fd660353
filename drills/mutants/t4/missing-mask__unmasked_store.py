"""Mutant of t4: the loads are masked, the store is not (blocks of 1024)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK_SIZE)
    m = float("-inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        offsets = start + lanes
        x = tl.load(x_ptr + row_idx * x_row_stride + offsets, mask=offsets < n_cols,
                    other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK_SIZE):
        offsets = start + lanes
        x = tl.load(x_ptr + row_idx * x_row_stride + offsets, mask=offsets < n_cols,
                    other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row_idx * y_row_stride + offsets,
                 (tl.exp(x - m) / s).to(y_ptr.dtype.element_ty))


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    x = x if x.stride(-1) == 1 else x.contiguous()
    rows = x.reshape(-1, n)
    y = torch.empty_like(rows)
    _kernel[(rows.shape[0],)](rows, y, rows.stride(0), y.stride(0), n, BLOCK_SIZE=1024)
    return y.view(x.shape)
