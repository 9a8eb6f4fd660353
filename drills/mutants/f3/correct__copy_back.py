"""F3, a correct solution that accepts tensors no view can flatten: it must pass with no diagnosis.

Where x or residual cannot be viewed as [rows, H], it works on contiguous copies and copies the
results back into the caller's tensors, so the in-place contract still holds (at the price of
two extra passes over memory).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _fused_add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, x_stride, r_stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + row * r_stride + cols, mask=mask, other=0.0).to(tl.float32)
    h = x + r
    tl.store(r_ptr + row * r_stride + cols, h.to(r_ptr.dtype.element_ty), mask=mask)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptr + row * x_stride + cols, (h * rstd * w).to(x_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_and_mul_kernel(x_ptr, o_ptr, x_stride, o_stride, d, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < d
    g = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + row * x_stride + d + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(o_ptr + row * o_stride + cols, (g * tl.sigmoid(g) * u).to(o_ptr.dtype.element_ty),
             mask=mask)


def _rows(t, n):
    """A [rows, n] view of t when one exists, else a contiguous copy."""
    try:
        return t.view(-1, n)
    except RuntimeError:
        return t.reshape(-1, n)


def fused_add_rmsnorm(x, residual, weight, eps=1e-6):
    n = x.shape[-1]
    x2, r2 = _rows(x, n), _rows(residual, n)
    block = triton.next_power_of_2(n)
    _fused_add_rmsnorm_kernel[(x2.shape[0],)](
        x2, r2, weight, x2.stride(0), r2.stride(0), n, eps, BLOCK=block, num_warps=8
    )
    for original, flat in ((x, x2), (residual, r2)):
        if flat.data_ptr() != original.data_ptr():
            original.copy_(flat.view(original.shape))


def silu_and_mul(x):
    d = x.shape[-1] // 2
    x2 = _rows(x, 2 * d)
    out = torch.empty(*x.shape[:-1], d, dtype=x.dtype, device=x.device)
    o2 = out.view(-1, d)
    block = min(1024, triton.next_power_of_2(d))
    _silu_and_mul_kernel[(x2.shape[0], triton.cdiv(d, block))](
        x2, o2, x2.stride(0), o2.stride(0), d, BLOCK=block, num_warps=4
    )
    return out
