"""A correct t4 written differently: exp2 on log2(e)-scaled values, blocks of 512, and a running
max that starts at -1e30 rather than -inf, so exp2(m - m_new) is never -inf - -inf (a block of
-inf leaves m at -1e30, and exp2(-inf - -1e30) = 0)."""

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634

@triton.jit
def _softmax_rows(x_ptr, y_ptr, x_stride, y_stride, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = tl.full((), -1e30, tl.float32)
    s = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        t = tl.load(x_ptr + pid * x_stride + cols, mask=cols < n_cols, other=float("-inf"))
        t = t.to(tl.float32) * 1.4426950408889634
        m_new = tl.maximum(m, tl.max(t, axis=0))
        s = s * tl.exp2(m - m_new) + tl.sum(tl.exp2(t - m_new), axis=0)
        m = m_new
    inv = 1.0 / s
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        t = tl.load(x_ptr + pid * x_stride + cols, mask=cols < n_cols, other=float("-inf"))
        p = tl.exp2(t.to(tl.float32) * 1.4426950408889634 - m) * inv
        tl.store(y_ptr + pid * y_stride + cols, p.to(y_ptr.dtype.element_ty), mask=cols < n_cols)

def softmax_online(x):
    n_cols = x.shape[-1]
    src = (x if x.stride(-1) == 1 else x.contiguous()).reshape(-1, n_cols)
    out = torch.empty((src.shape[0], n_cols), dtype=x.dtype, device=x.device)
    _softmax_rows[(src.shape[0],)](src, out, src.stride(0), out.stride(0), n_cols, BLOCK=512,
                                   num_warps=4)
    return out.reshape(x.shape)
