"""Mutant of t2: each row is shifted by its mean instead of its max. Exact while every value
is within 88 of the mean; exp overflows (inf / inf = NaN) when one value is far above it."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_mean(x, mask, n_cols):
    return tl.sum(tl.where(mask, x, 0.0), axis=0) / n_cols


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, xs, ys, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * xs + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - _row_mean(x, mask, n_cols))
    tl.store(y_ptr + row * ys + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty),
             mask=mask)


def softmax(x):
    n = x.shape[-1]
    x2 = x.reshape(-1, n) if x.stride(-1) == 1 else x.contiguous().reshape(-1, n)
    y = torch.empty((x2.shape[0], n), dtype=x.dtype, device=x.device)
    _softmax_kernel[(x2.shape[0],)](x2, y, x2.stride(0), y.stride(0), n,
                                    BLOCK=triton.next_power_of_2(n), num_warps=4)
    return y.view(x.shape)
