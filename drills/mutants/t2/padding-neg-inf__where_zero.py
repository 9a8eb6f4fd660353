"""Mutant of t2: padded lanes set to 0 with tl.where (the author meant to neutralise them)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _load_row(ptr, cols, n_cols):
    in_row = cols < n_cols
    v = tl.load(ptr + cols, mask=in_row, other=float("-inf")).to(tl.float32)
    return tl.where(in_row, v, 0.0)


@triton.jit
def _kernel(X, Y, sx, sy, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    v = _load_row(X + row * sx, cols, n_cols)
    p = tl.exp(v - tl.max(v, axis=0))
    p = p / tl.sum(p, axis=0)
    tl.store(Y + row * sy + cols, p.to(Y.dtype.element_ty), mask=cols < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    x2 = (x if x.stride(-1) == 1 else x.contiguous()).reshape(-1, n)
    y2 = x2.new_empty(x2.shape)
    _kernel[(x2.shape[0],)](x2, y2, x2.stride(0), y2.stride(0), n,
                            BLOCK_N=triton.next_power_of_2(n))
    return y2.reshape(x.shape)
