"""Mutant of T3 (compact style): RMSNorm never loads or applies the weight.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def ln_kernel(X, W, B, Y, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < N
    x = tl.load(X + row * stride + cols, mask=inside, other=0.0).to(tl.float32)
    mu = tl.sum(x, axis=0) / N
    diff = tl.where(inside, x - mu, 0.0)
    var = tl.sum(diff * diff, axis=0) / N
    inv_std = tl.rsqrt(var + eps)
    w = tl.load(W + cols, mask=inside, other=1.0).to(tl.float32)
    b = tl.load(B + cols, mask=inside, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (diff * inv_std * w + b).to(Y.dtype.element_ty), mask=inside)
    tl.store(Mean + row, mu)
    tl.store(Rstd + row, inv_std)


@triton.jit
def rms_kernel(X, W, Y, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < N
    x = tl.load(X + row * stride + cols, mask=inside, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / N
    tl.store(Y + row * N + cols, (x * tl.rsqrt(ms + eps)).to(Y.dtype.element_ty), mask=inside)


def layer_norm(x, weight, bias, eps=1e-5):
    shape = x.shape
    N = shape[-1]
    rows = x.reshape(-1, N)
    if rows.stride(1) != 1:
        rows = rows.contiguous()
    M = rows.shape[0]
    out = torch.empty(M, N, dtype=x.dtype, device=x.device)
    mu = torch.empty(M, dtype=torch.float32, device=x.device)
    rs = torch.empty(M, dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(N)
    ln_kernel[(M,)](rows, weight, bias, out, mu, rs, rows.stride(0), N, eps, BLOCK=BLOCK,
                    num_warps=4)
    return out.reshape(shape), mu, rs


def rms_norm(x, weight, eps=1e-6):
    shape = x.shape
    N = shape[-1]
    rows = x.reshape(-1, N)
    if rows.stride(1) != 1:
        rows = rows.contiguous()
    M = rows.shape[0]
    out = torch.empty(M, N, dtype=x.dtype, device=x.device)
    rms_kernel[(M,)](rows, weight, out, rows.stride(0), N, eps, BLOCK=triton.next_power_of_2(N))
    return out.reshape(shape)
