"""Mutant of t5: rows of tiles from cdiv, columns of tiles from int(N / BN): the tiles over
the right edge of x (the bottom rows of y) are never copied."""

import torch
import triton
import triton.language as tl


@triton.jit
def _t(x_ptr, y_ptr, M, N, sxm, sxn, sym, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    ok = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=ok)
    tl.store(y_ptr + rn[:, None] * sym + rm[None, :], tl.trans(tile), mask=tl.trans(ok))


def transpose(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    y = torch.empty((N, M), dtype=x.dtype, device=x.device)
    bm, bn = 32, 32
    grid = (triton.cdiv(M, bm), int(N / bn))
    _t[grid](x, y, M, N, x.stride(0), x.stride(1), y.stride(0), BM=bm, BN=bn, num_warps=4)
    return y
