"""m3 bug (none named): natural-exp kernel; batch and head are taken the wrong way round from
the program id: b = bh % H, h = bh // H (right only when B == H; otherwise out-of-range b or h)."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _flash(Q, Kt, V, O, sqb, sqh, sqs, skb, skh, sks, svb, svh, svs, sob, soh, sos,
           H, S, scale, CAUSAL: tl.constexpr, D: tl.constexpr,
           BM: tl.constexpr, BN: tl.constexpr):
    qblk = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh % H
    h = bh // H
    rows = qblk * BM + tl.arange(0, BM)
    dd = tl.arange(0, D)
    row_ok = rows < S
    q = tl.load(Q + b * sqb + h * sqh + rows[:, None] * sqs + dd[None, :],
                mask=row_ok[:, None], other=0.0)
    run_max = tl.full((BM,), float("-inf"), tl.float32)
    run_sum = tl.zeros((BM,), tl.float32)
    out = tl.zeros((BM, D), tl.float32)
    for j0 in range(0, S, BN):
        keys = j0 + tl.arange(0, BN)
        key_ok = keys < S
        kt = tl.load(Kt + b * skb + h * skh + keys[:, None] * sks + dd[None, :],
                     mask=key_ok[:, None], other=0.0)                     # [BN, D]
        vt = tl.load(V + b * svb + h * svh + keys[:, None] * svs + dd[None, :],
                     mask=key_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(kt)) * scale
        ok = key_ok[None, :]
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        new_max = tl.maximum(run_max, tl.max(s, axis=1))
        corr = tl.exp(run_max - new_max)
        e = tl.exp(s - new_max[:, None])
        run_sum = run_sum * corr + tl.sum(e, axis=1)
        out = out * corr[:, None] + tl.dot(e.to(vt.dtype), vt)
        run_max = new_max
    res = out / run_sum[:, None]
    tl.store(O + b * sob + h * soh + rows[:, None] * sos + dd[None, :],
             res.to(O.dtype.element_ty), mask=row_ok[:, None])


def attention(q, k, v, causal=False, sm_scale=None):
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError("q, k, v must share a [B, H, S, D] shape")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError("dtypes differ")
    B, H, S, D = q.shape
    if D not in (16, 32, 64, 128):
        raise ValueError("head dim")
    q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    o = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    BM, BN = 32, 32
    grid = (triton.cdiv(S, BM), B * H)
    _flash[grid](q, k, v, o, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
                 H, S, sm_scale, CAUSAL=bool(causal), D=D, BM=BM, BN=BN)
    return o
