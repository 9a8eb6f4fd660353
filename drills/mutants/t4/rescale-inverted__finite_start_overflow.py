"""A t4 mutant: the rescale factor written exp(m_new - m_old) (>= 1, it overflows) instead of
exp(m_old - m_new), with the running max starting at a finite -1e30. Every row turns NaN (0 *
inf in the first block): rescale-inverted, not neg-inf-start, since nothing in it is -inf.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _k(X, Y, sx, sy, n_rows, N, B: tl.constexpr, RPP: tl.constexpr):
    for i in tl.static_range(RPP):
        row = tl.program_id(0).to(tl.int64) * RPP + i
        if row < n_rows:
            lanes = tl.arange(0, B)
            m = tl.full((), -1e30, tl.float32)
            s = tl.zeros((), tl.float32)
            for st in range(0, N, B):
                o = st + lanes
                v = tl.load(X + row * sx + o, mask=o < N, other=-1e30).to(tl.float32)
                m_new = tl.maximum(m, tl.max(v, axis=0))
                s = s * tl.exp(m_new - m) + tl.sum(tl.exp(v - m_new), axis=0)  # BUG: sign
                m = m_new
            for st in range(0, N, B):
                o = st + lanes
                v = tl.load(X + row * sx + o, mask=o < N, other=-1e30).to(tl.float32)
                tl.store(Y + row * sy + o, (tl.exp(v - m) / s).to(Y.dtype.element_ty), mask=o < N)


def softmax_online(x):
    N = x.shape[-1]
    if x.stride(-1) != 1:
        x = x.contiguous()
    r = x.reshape(-1, N)
    y = torch.empty((r.shape[0], N), dtype=x.dtype, device=x.device)
    _k[(triton.cdiv(r.shape[0], 2),)](
        r, y, r.stride(0), y.stride(0), r.shape[0], N, B=1024, RPP=2, num_warps=4
    )
    return y.view(x.shape)
