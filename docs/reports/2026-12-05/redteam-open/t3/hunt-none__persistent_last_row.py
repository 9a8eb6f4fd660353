"""Mistake: persistent kernels (3 programs) walk the rows with range(pid, n_rows - 1, NPROG): the loop bound is one short, so the last row's y (and mean, rstd) are never computed. The grid matches the loop; the math is right."""
import torch
import triton
import triton.language as tl

NPROG = 3


@triton.jit
def _layer_norm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, x_row_stride, y_row_stride, n_rows, n_cols, eps, NPROG: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    for row in range(tl.program_id(0), n_rows - 1, NPROG):
        r = row.to(tl.int64)
        x = tl.load(x_ptr + r * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        xc = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
        tl.store(y_ptr + r * y_row_stride + cols, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(mean_ptr + r, mean)
        tl.store(rstd_ptr + r, rstd)


@triton.jit
def _rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, x_row_stride, y_row_stride, n_rows, n_cols, eps, NPROG: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    for row in range(tl.program_id(0), n_rows - 1, NPROG):
        r = row.to(tl.int64)
        x = tl.load(x_ptr + r * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        tl.store(y_ptr + r * y_row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def _rows(x, n):
    x2 = x.reshape(-1, n)
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    return x2


def layer_norm(x, weight, bias, eps=1e-5):
    n = x.shape[-1]
    x2 = _rows(x, n)
    m = x2.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    mean = torch.empty(m, dtype=torch.float32, device=x.device)
    rstd = torch.empty(m, dtype=torch.float32, device=x.device)
    _layer_norm_fwd_kernel[(NPROG,)](x2, weight.contiguous(), bias.contiguous(), y, mean, rstd, x2.stride(0), y.stride(0), m, n, eps, NPROG=NPROG, BLOCK_N=triton.next_power_of_2(n))
    return y.view(x.shape), mean, rstd


def rms_norm(x, weight, eps=1e-6):
    n = x.shape[-1]
    x2 = _rows(x, n)
    m = x2.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _rms_norm_fwd_kernel[(NPROG,)](x2, weight.contiguous(), y, x2.stride(0), y.stride(0), m, n, eps, NPROG=NPROG, BLOCK_N=triton.next_power_of_2(n))
    return y.view(x.shape)
