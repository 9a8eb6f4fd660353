"""A t5 mutant: the grid's second axis copies the first, cdiv(M, BN) where cdiv(N, BN) belongs.
The kernel maps the program ids to the right axes, so this is a grid too small, not a swap.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _k(X, Y, M, N, sxm, sxn, sy, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    rn = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    ok = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(X + rm[:, None] * sxm + rn[None, :] * sxn, mask=ok)
    tl.store(Y + rn[:, None] * sy + rm[None, :], tl.trans(v), mask=tl.trans(ok))


def transpose(x):
    M, N = x.shape
    y = torch.empty((N, M), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, 32), triton.cdiv(M, 32))  # BUG: M on both axes
    _k[grid](x, y, M, N, x.stride(0), x.stride(1), y.stride(0), BM=32, BN=32)
    return y
