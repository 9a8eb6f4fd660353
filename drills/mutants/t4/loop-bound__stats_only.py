"""Mutant of t4: pass 1 counts only the full blocks (n // BLOCK of them); pass 2 is right."""

import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK_SIZE)
    m = float("-inf")
    s = 0.0
    for b in range(n_cols // BLOCK_SIZE):
        offsets = b * BLOCK_SIZE + lanes
        x = tl.load(x_ptr + row_idx * x_row_stride + offsets).to(tl.float32)  # full blocks only
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK_SIZE):
        offsets = start + lanes
        mask = offsets < n_cols
        x = tl.load(x_ptr + row_idx * x_row_stride + offsets, mask=mask,
                    other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row_idx * y_row_stride + offsets,
                 (tl.exp(x - m) / s).to(y_ptr.dtype.element_ty), mask=mask)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    x = x if x.stride(-1) == 1 else x.contiguous()
    rows = x.reshape(-1, n)
    y = torch.empty_like(rows)
    block = min(triton.next_power_of_2(n), 2048)
    _kernel[(rows.shape[0],)](rows, y, rows.stride(0), y.stride(0), n, BLOCK_SIZE=block,
                              num_warps=8)
    return y.view(x.shape)
