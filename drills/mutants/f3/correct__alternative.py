"""F3, a correct solution written differently from the reference: it must pass with no diagnosis.

Differences: padded lanes zeroed with tl.where instead of other=, 1/sqrt instead of rsqrt, the
weight folded into rstd first, the mean taken as a product with 1/H, the wrapper reading strides
from the tensors themselves; silu written with exp, the output allocated with new_empty.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_norm_kernel(X, R, W, stride_x, stride_r, H, inv_h, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    inside = cols < H
    xs = tl.load(X + pid * stride_x + cols, mask=inside)
    rs = tl.load(R + pid * stride_r + cols, mask=inside)
    s = tl.where(inside, xs.to(tl.float32) + rs.to(tl.float32), 0.0)
    var = tl.sum(s * s, axis=0) * inv_h
    scale = 1.0 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=inside).to(tl.float32)
    tl.store(X + pid * stride_x + cols, (s * (scale * w)).to(X.dtype.element_ty), mask=inside)
    tl.store(R + pid * stride_r + cols, s.to(R.dtype.element_ty), mask=inside)


@triton.jit
def swiglu_kernel(X, O, stride_x, stride_o, half, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = c < half
    g = tl.load(X + r * stride_x + c, mask=ok, other=0.0).to(tl.float32)
    u = tl.load(X + r * stride_x + half + c, mask=ok, other=0.0).to(tl.float32)
    y = u * (g / (1.0 + tl.exp(-g)))
    tl.store(O + r * stride_o + c, y.to(O.dtype.element_ty), mask=ok)


def fused_add_rmsnorm(x, residual, weight, eps=1e-6):
    hidden = x.size(-1)
    xv = x.view(-1, hidden)
    rv = residual.view(-1, hidden)
    block = triton.next_power_of_2(hidden)
    add_norm_kernel[(xv.size(0),)](
        xv, rv, weight, xv.stride(0), rv.stride(0), hidden, 1.0 / hidden, eps, BLOCK=block
    )


def silu_and_mul(x):
    half = x.size(-1) // 2
    xv = x.view(-1, 2 * half) if x.is_contiguous() else x.reshape(-1, 2 * half)
    out = x.new_empty(*x.shape[:-1], half)
    ov = out.view(-1, half)
    block = min(1024, triton.next_power_of_2(half))
    swiglu_kernel[(xv.size(0), triton.cdiv(half, block))](
        xv, ov, xv.stride(0), ov.stride(0), half, BLOCK=block
    )
    return out
