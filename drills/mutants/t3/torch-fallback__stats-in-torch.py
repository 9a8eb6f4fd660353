"""Mutant of t3: mean and variance computed with torch (x.mean, x.var), only the normalisation
in a Triton kernel: half a fallback (a kernel was launched, but torch did the statistics)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _normalize(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n, HAS_BIAS: tl.constexpr,
               BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    keep = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=keep, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    w = tl.load(w_ptr + cols, mask=keep, other=0.0).to(tl.float32)
    y = (x - mean) * rstd * w
    if HAS_BIAS:
        y += tl.load(b_ptr + cols, mask=keep, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n + cols, y.to(y_ptr.dtype.element_ty), mask=keep)


def _run(x, weight, bias, mean, rstd):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    y = torch.empty(rows.shape, dtype=x.dtype, device=x.device)
    _normalize[(rows.shape[0],)](
        rows, y, weight, bias if bias is not None else weight, mean, rstd, rows.stride(0), n,
        HAS_BIAS=bias is not None, BLOCK=triton.next_power_of_2(n),
    )
    return y.view(x.shape)


def layer_norm(x, weight, bias, eps=1e-5):
    rows = x.reshape(-1, x.shape[-1]).float()
    mean = rows.mean(dim=-1).contiguous()
    rstd = torch.rsqrt(rows.var(dim=-1, unbiased=False) + eps).contiguous()
    return _run(x, weight, bias, mean, rstd), mean, rstd


def rms_norm(x, weight, eps=1e-6):
    rows = x.reshape(-1, x.shape[-1]).float()
    rstd = torch.rsqrt((rows * rows).mean(dim=-1) + eps).contiguous()
    zeros = torch.zeros_like(rstd)
    return _run(x, weight, None, zeros, rstd)
