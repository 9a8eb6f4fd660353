"""Correct variant for B2: one row per program, dw accumulated with tl.atomic_add into fp32.

Right, but slower on the GPU: M programs contend for the same N addresses, and the order of the
additions changes from run to run (dw is not bit-reproducible).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _bwd(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_ptr, s_dy, s_x, s_dx, N,
         BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    dy = tl.load(dy_ptr + row * s_dy + cols, mask=m, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + row * s_x + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    r = tl.load(rstd_ptr + row)
    xh = x * r
    g = dy * w
    dx = r * g - r * xh * (tl.sum(g * xh, axis=0) / N)
    tl.store(dx_ptr + row * s_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=m)
    tl.atomic_add(dw_ptr + cols, dy * xh, mask=m)


def rms_norm_backward(dy, x, weight, rstd):
    M, N = x.shape
    dx = torch.empty((M, N), dtype=x.dtype, device=x.device)
    dw = torch.zeros(N, dtype=torch.float32, device=x.device)
    _bwd[(M,)](dy, x, weight, rstd, dx, dw, dy.stride(0), x.stride(0), dx.stride(0), N,
               BLOCK=triton.next_power_of_2(N), num_warps=4)
    return dx, dw.to(weight.dtype)
