"""A correct M1 variant: addresses rebuilt from k0 in every iteration, a 2-D grid."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _mm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
            mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
            mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b)
    tl.store(
        c_ptr + rm[:, None] * scm + rn[None, :] * scn,
        acc.to(c_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 64))
    _mm[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BM=32,
        BN=64,
        BK=32,
        num_warps=4,
    )
    return c
