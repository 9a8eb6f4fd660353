"""Mistake: the rescale of the old sum is right, but the block's new terms use the OLD max: s = s * exp(m - m_new) + sum(exp(x - m)) (m where m_new belongs). The -inf start is guarded for m_new."""
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x_ptr + row * x_row_stride
    yr = y_ptr + row * y_row_stride
    lanes = tl.arange(0, BLOCK_SIZE)
    m = tl.full((), float("-inf"), tl.float32)
    s = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        o = start + lanes
        x = tl.load(xr + o, mask=o < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK_SIZE):
        o = start + lanes
        x = tl.load(xr + o, mask=o < n_cols, other=float("-inf")).to(tl.float32)
        tl.store(yr + o, (tl.exp(x - m) / s).to(y_ptr.dtype.element_ty), mask=o < n_cols)


def softmax_online(x):
    n_cols = x.shape[-1]
    if x.stride(-1) != 1:
        x = x.contiguous()
    xr = x.reshape(-1, n_cols)
    yr = torch.empty(xr.shape, dtype=x.dtype, device=x.device)
    _softmax_online_kernel[(xr.shape[0],)](xr, yr, xr.stride(0), yr.stride(0), n_cols, BLOCK_SIZE=BLOCK, num_warps=8)
    return yr.view(x.shape)
