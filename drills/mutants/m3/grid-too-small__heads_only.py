"""m3 mutant, single-loop style: the grid counts heads, not batch * heads.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _flash(Q, K, V, O, sqb, sqh, sqs, skb, skh, sks, svb, svh, svs, sob, soh, sos,
           H, N, scale, CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr,
           BN: tl.constexpr):
    bh = tl.program_id(0)
    b = bh // H
    h = bh % H
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(Q + b * sqb + h * sqh + rows[:, None] * sqs + dims[None, :],
                mask=rows[:, None] < N, other=0.0)
    m = tl.zeros([BM], dtype=tl.float32) - float("inf")
    s = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    end = N
    if CAUSAL:
        end = tl.minimum((tl.program_id(1) + 1) * BM, N)
    for start in range(0, end, BN):
        cols = start + tl.arange(0, BN)
        kt = tl.load(K + b * skb + h * skh + cols[None, :] * sks + dims[:, None],
                     mask=cols[None, :] < N, other=0.0)
        vv = tl.load(V + b * svb + h * svh + cols[:, None] * svs + dims[None, :],
                     mask=cols[:, None] < N, other=0.0)
        z = tl.dot(q, kt) * scale
        keep = cols[None, :] < N
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        z = tl.where(keep, z, float("-inf"))
        m2 = tl.maximum(m, tl.max(z, axis=1))
        shrink = tl.exp(m - m2)
        e = tl.exp(z - m2[:, None])
        s = s * shrink + tl.sum(e, axis=1)
        acc = acc * shrink[:, None] + tl.dot(e.to(vv.dtype), vv)
        m = m2
    tl.store(O + b * sob + h * soh + rows[:, None] * sos + dims[None, :],
             (acc / s[:, None]).to(O.dtype.element_ty), mask=rows[:, None] < N)


def attention(q, k, v, causal=False, sm_scale=None):
    B, H, N, D = q.shape
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(D)
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    BM, BN = 32, 32
    _flash[(H, triton.cdiv(N, BM))](
        q, k, v, o, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
        H, N, scale, CAUSAL=causal, D=D, BM=BM, BN=BN, num_warps=4)
    return o
