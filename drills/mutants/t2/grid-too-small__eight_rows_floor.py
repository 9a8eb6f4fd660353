"""T2 mutant (grid-too-small): eight rows a program in a 2-D block, and the grid counts its
programs with max(1, M // 8): with 8 rows or fewer one program covers them all, and only a row
count that is no multiple of 8 (37) leaves the last rows unwritten."""
import torch
import triton
import triton.language as tl

ROWS = 8


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, xs, ys, M, N, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    rows = (tl.program_id(0) * ROWS + tl.arange(0, ROWS)).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    rmask = rows < M
    cmask = cols < N
    full = rmask[:, None] & cmask[None, :]
    x = tl.load(x_ptr + rows[:, None] * xs + cols[None, :], mask=full, other=float("-inf"))
    x = x.to(tl.float32)
    x = tl.where(full, x, float("-inf"))
    mx = tl.max(x, axis=1)
    mx = tl.where(rmask, mx, 0.0)
    e = tl.exp(x - mx[:, None])
    s = tl.sum(e, axis=1)
    s = tl.where(rmask, s, 1.0)
    tl.store(y_ptr + rows[:, None] * ys + cols[None, :], (e / s[:, None]).to(y_ptr.dtype.element_ty), mask=full)


def softmax(x):
    N = x.shape[-1]
    x = x if x.stride(-1) == 1 else x.contiguous()
    xr = x.reshape(-1, N)
    yr = torch.empty(xr.shape, dtype=x.dtype, device=x.device)
    M = xr.shape[0]
    _softmax_kernel[(max(1, M // ROWS),)](xr, yr, xr.stride(0), yr.stride(0), M, N,
                                          BLOCK_N=triton.next_power_of_2(N), ROWS=ROWS)
    return yr.view(x.shape)
