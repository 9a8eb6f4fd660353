"""A t4 mutant: the running max starts at 0 (harmless: any start at or below the true max
works) and the sum is rescaled by exp(m_new - m_old), the inverse of exp(m_old - m_new): it
grows where it should shrink whenever the max rises. Blocks of 1024."""

import torch
import triton
import triton.language as tl


@triton.jit
def _online_softmax(X, Y, sx, sy, N, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    m = tl.zeros((), tl.float32)
    s = tl.zeros((), tl.float32)
    for st in range(0, N, BLOCK):
        c = st + tl.arange(0, BLOCK)
        v = tl.load(X + r * sx + c, mask=c < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(v, axis=0))
        s = s * tl.exp(m_new - m) + tl.sum(tl.exp(v - m_new), axis=0)
        m = m_new
    for st in range(0, N, BLOCK):
        c = st + tl.arange(0, BLOCK)
        v = tl.load(X + r * sx + c, mask=c < N, other=float("-inf")).to(tl.float32)
        tl.store(Y + r * sy + c, (tl.exp(v - m) / s).to(Y.dtype.element_ty), mask=c < N)


def softmax_online(x):
    N = x.shape[-1]
    x2 = (x if x.stride(-1) == 1 else x.contiguous()).reshape(-1, N)
    y = torch.empty_like(x2)
    _online_softmax[(x2.shape[0],)](x2, y, x2.stride(0), y.stride(0), N, BLOCK=1024,
                                    num_warps=4)
    return y.reshape(x.shape)
