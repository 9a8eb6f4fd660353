"""Mutant for B2: the accumulator restarts at every row, so only each program's last row counts."""

import torch
import triton
import triton.language as tl

ROWS_PER_PROGRAM = 3


@triton.jit
def _dx_and_partial_dw(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, part_ptr, s_dy, s_x, s_dx,
                       M, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(ROWS):
        row = (pid * ROWS + i).to(tl.int64)
        ok = m & (tl.full((BLOCK,), 0, tl.int64) + row < M)
        dy = tl.load(dy_ptr + row * s_dy + cols, mask=ok, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + row * s_x + cols, mask=ok, other=0.0).to(tl.float32)
        r = tl.load(rstd_ptr + row, mask=row < M, other=0.0)
        xh = x * r
        c = tl.sum(dy * w * xh, axis=0) / N
        tl.store(dx_ptr + row * s_dx + cols, (r * (dy * w - xh * c)).to(dx_ptr.dtype.element_ty),
                 mask=ok)
        acc = tl.zeros((BLOCK,), dtype=tl.float32) + dy * xh
    tl.store(part_ptr + pid * N + cols, acc, mask=m)


@triton.jit
def _sum_rows(part_ptr, dw_ptr, P, N, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = cols < N
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for p in range(P):
        total += tl.load(part_ptr + p * N + cols, mask=m, other=0.0)
    tl.store(dw_ptr + cols, total.to(dw_ptr.dtype.element_ty), mask=m)


def rms_norm_backward(dy, x, weight, rstd):
    M, N = x.shape
    programs = triton.cdiv(M, ROWS_PER_PROGRAM)
    dx = torch.empty((M, N), dtype=x.dtype, device=x.device)
    part = torch.empty((programs, N), dtype=torch.float32, device=x.device)
    _dx_and_partial_dw[(programs,)](dy, x, weight, rstd, dx, part, dy.stride(0), x.stride(0),
                                    dx.stride(0), M, N, ROWS=ROWS_PER_PROGRAM,
                                    BLOCK=triton.next_power_of_2(N), num_warps=4)
    dw = torch.empty(N, dtype=weight.dtype, device=x.device)
    _sum_rows[(triton.cdiv(N, 64),)](part, dw, programs, N, BLOCK=64, num_warps=2)
    return dx, dw
