"""t3 buggy: rms_norm loads the padded lanes as 1.0 ("neutral"), so they enter the mean of squares.
layer_norm correct."""
import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, x_row_stride,
                           y_row_stride, n_cols, eps, BLOCK_N: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    k = tl.arange(0, BLOCK_N)
    keep = k < n_cols
    v = tl.load(x_ptr + r * x_row_stride + k, mask=keep, other=0.0).to(tl.float32)
    mu = tl.sum(v, axis=0) / n_cols
    d = tl.where(keep, v - mu, 0.0)
    inv = tl.rsqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    g = tl.load(w_ptr + k, mask=keep, other=0.0).to(tl.float32)
    h = tl.load(b_ptr + k, mask=keep, other=0.0).to(tl.float32)
    tl.store(y_ptr + r * y_row_stride + k, (d * inv * g + h).to(y_ptr.dtype.element_ty), mask=keep)
    tl.store(mean_ptr + r, mu)
    tl.store(rstd_ptr + r, inv)


@triton.jit
def _rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, eps,
                         BLOCK_N: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    k = tl.arange(0, BLOCK_N)
    keep = k < n_cols
    v = tl.load(x_ptr + r * x_row_stride + k, mask=keep, other=1.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(v * v, axis=0) / n_cols + eps)
    g = tl.load(w_ptr + k, mask=keep, other=0.0).to(tl.float32)
    tl.store(y_ptr + r * y_row_stride + k, (v * inv * g).to(y_ptr.dtype.element_ty), mask=keep)


def _rows(x):
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    return x2, n


def layer_norm(x, weight, bias, eps=1e-5):
    x2, n = _rows(x)
    m = x2.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    mean = torch.empty(m, dtype=torch.float32, device=x.device)
    rstd = torch.empty(m, dtype=torch.float32, device=x.device)
    _layer_norm_fwd_kernel[(m,)](x2, weight.contiguous(), bias.contiguous(), y, mean, rstd,
                                 x2.stride(0), y.stride(0), n, eps,
                                 BLOCK_N=triton.next_power_of_2(n))
    return y.view(x.shape), mean, rstd


def rms_norm(x, weight, eps=1e-6):
    x2, n = _rows(x)
    m = x2.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _rms_norm_fwd_kernel[(m,)](x2, weight.contiguous(), y, x2.stride(0), y.stride(0), n, eps,
                               BLOCK_N=triton.next_power_of_2(n))
    return y.view(x.shape)
