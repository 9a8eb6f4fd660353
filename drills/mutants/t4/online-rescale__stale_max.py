"""Mutant of t4: the max is updated before the rescale factor is taken, so the factor is
exp(m - m) = 1 (a helper does the update; blocks of 1024)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _update(m, s, block):
    m = tl.maximum(m, tl.max(block, axis=0))
    shift = tl.where(m == float("-inf"), 0.0, m)
    s = s * tl.exp(m - shift) + tl.sum(tl.exp(block - shift), axis=0)  # m already new here
    return m, s


@triton.jit
def _softmax_online(x_ptr, y_ptr, x_stride, y_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    m = float("-inf")
    s = 0.0
    for c in range(0, tl.cdiv(n_cols, BLOCK_SIZE)):
        cols = c * BLOCK_SIZE + offs
        block = tl.load(x_ptr + pid * x_stride + cols, mask=cols < n_cols, other=float("-inf"))
        m, s = _update(m, s, block.to(tl.float32))
    for c in range(0, tl.cdiv(n_cols, BLOCK_SIZE)):
        cols = c * BLOCK_SIZE + offs
        block = tl.load(x_ptr + pid * x_stride + cols, mask=cols < n_cols, other=float("-inf"))
        out = tl.exp(block.to(tl.float32) - m) / s
        tl.store(y_ptr + pid * y_stride + cols, out.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


def softmax_online(x):
    n_cols = x.shape[-1]
    src = x if x.stride(-1) == 1 else x.contiguous()
    src = src.reshape(-1, n_cols)
    out = torch.empty((src.shape[0], n_cols), dtype=x.dtype, device=x.device)
    _softmax_online[(src.shape[0],)](src, out, src.stride(0), out.stride(0), n_cols,
                                     BLOCK_SIZE=1024, num_warps=4)
    return out.reshape(x.shape)
