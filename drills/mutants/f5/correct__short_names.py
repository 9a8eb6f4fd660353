"""A correct f5 written differently: one program per row, blocks of 1024 at 8 warps, short
names, pass 2 loading padding as 0 (its lanes are never stored).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _k(X, Y, G, L, NV, sx, sg, V, ign, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    y = tl.load(Y + row)
    gbase = G + row * sg
    xbase = X + row * sx
    if y == ign:
        for k in range(0, V, BLOCK):
            o = k + tl.arange(0, BLOCK)
            tl.store(gbase + o, tl.zeros((BLOCK,), tl.float32).to(G.dtype.element_ty), mask=o < V)
        tl.store(L + row, 0.0)
        return
    m = -float("inf")
    s = 0.0
    for k in range(0, V, BLOCK):
        o = k + tl.arange(0, BLOCK)
        msk = o < V
        x = tl.load(xbase + o, mask=msk, other=-float("inf")).to(tl.float32)
        bm = tl.max(x, axis=0)
        nm = tl.maximum(m, bm)
        s = s * tl.exp(m - nm) + tl.sum(tl.exp(x - nm), axis=0)
        m = nm
    lse = m + tl.log(s)
    n = tl.load(NV).to(tl.float32)
    xt = tl.load(xbase + y).to(tl.float32)
    tl.store(L + row, (lse - xt) / n)
    for k in range(0, V, BLOCK):
        o = k + tl.arange(0, BLOCK)
        msk = o < V
        x = tl.load(xbase + o, mask=msk, other=0.0).to(tl.float32)
        p = tl.exp(x - lse)
        g = tl.where(o == y, p - 1.0, p) / n
        tl.store(gbase + o, g.to(G.dtype.element_ty), mask=msk)


def cross_entropy(logits, target, ignore_index=-100):
    if logits.stride(-1) != 1:
        logits = logits.contiguous()
    T, V = logits.shape
    g = torch.empty((T, V), dtype=logits.dtype, device=logits.device)
    L = torch.empty(T, dtype=torch.float32, device=logits.device)
    nv = (target != ignore_index).sum()
    _k[(T,)](
        logits,
        target,
        g,
        L,
        nv,
        logits.stride(0),
        g.stride(0),
        V,
        ignore_index,
        BLOCK=1024,
        num_warps=8,
    )
    return L.sum(), g
