"""A correct M2 variant: addresses rebuilt from k0, a 2-D grid, GELU as 0.5 v (1 + tanh)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _gelu(v):
    z = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return 0.5 * v * (1.0 + (2.0 * tl.sigmoid(2.0 * z) - 1.0))


@triton.jit
def _linear_gelu(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    sxm,
    sxk,
    swn,
    swk,
    sym,
    syn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        x = tl.load(
            x_ptr + rm[:, None] * sxm + kk[None, :] * sxk,
            mask=(rm[:, None] < M) & (kk[None, :] < K),
            other=0.0,
        )
        w = tl.load(
            w_ptr + kk[:, None] * swk + rn[None, :] * swn,
            mask=(kk[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(x, w)
    b = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    acc = _gelu(acc + b[None, :])
    tl.store(
        y_ptr + rm[:, None] * sym + rn[None, :] * syn,
        acc.to(y_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


def linear_gelu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    _linear_gelu[grid](
        x,
        w,
        b,
        y,
        M,
        N,
        K,
        x.stride(0),
        x.stride(1),
        w.stride(0),
        w.stride(1),
        y.stride(0),
        y.stride(1),
        BM=32,
        BN=32,
        BK=32,
        num_warps=4,
    )
    return y
