"""A correct T3 written another way: rows of any length, walked in column blocks.

LayerNorm merges each block's (count, mean, M2) into the running ones with Chan's parallel
form of Welford's update, so no E[x^2] - E[x]^2 ever cancels; a second walk writes y.
RMSNorm accumulates sum(x^2) block by block. Must pass every test with no diagnosis.
"""

import torch
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def _ln_stats_and_apply(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr,
                        stride_x, stride_y, n, eps, CHUNK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + pid * stride_x
    y_row = y_ptr + pid * stride_y
    lanes = tl.arange(0, CHUNK)
    count = 0.0
    run_mean = 0.0
    run_m2 = 0.0
    for start in range(0, n, CHUNK):
        cols = start + lanes
        valid = cols < n
        v = tl.load(x_row + cols, mask=valid, other=0.0).to(tl.float32)
        k = tl.sum(valid.to(tl.float32), axis=0)
        chunk_mean = tl.sum(v, axis=0) / k
        dev = tl.where(valid, v - chunk_mean, 0.0)
        chunk_m2 = tl.sum(dev * dev, axis=0)
        total = count + k
        delta = chunk_mean - run_mean
        run_mean = run_mean + delta * (k / total)
        run_m2 = run_m2 + chunk_m2 + delta * delta * (count * k / total)
        count = total
    inv_std = 1.0 / tl.sqrt(run_m2 / n + eps)
    for start in range(0, n, CHUNK):
        cols = start + lanes
        valid = cols < n
        v = tl.load(x_row + cols, mask=valid, other=0.0).to(tl.float32)
        g = tl.load(w_ptr + cols, mask=valid, other=0.0).to(tl.float32)
        h = tl.load(b_ptr + cols, mask=valid, other=0.0).to(tl.float32)
        out = (v - run_mean) * inv_std * g + h
        tl.store(y_row + cols, out.to(y_ptr.dtype.element_ty), mask=valid)
    tl.store(mean_ptr + pid, run_mean)
    tl.store(rstd_ptr + pid, inv_std)


@triton.jit
def _rms_apply(x_ptr, w_ptr, y_ptr, stride_x, stride_y, n, eps, CHUNK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, CHUNK)
    acc = tl.zeros([CHUNK], dtype=tl.float32)
    for start in range(0, n, CHUNK):
        cols = start + lanes
        v = tl.load(x_ptr + pid * stride_x + cols, mask=cols < n, other=0.0).to(tl.float32)
        acc += v * v
    inv_rms = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    for start in range(0, n, CHUNK):
        cols = start + lanes
        valid = cols < n
        v = tl.load(x_ptr + pid * stride_x + cols, mask=valid, other=0.0).to(tl.float32)
        g = tl.load(w_ptr + cols, mask=valid, other=0.0).to(tl.float32)
        tl.store(y_ptr + pid * stride_y + cols, (v * inv_rms * g).to(y_ptr.dtype.element_ty),
                 mask=valid)


def _as_rows(x):
    rows = x.reshape(-1, x.shape[-1])
    return rows if rows.stride(-1) == 1 else rows.contiguous()


def layer_norm(x, weight, bias, eps=1e-5):
    rows = _as_rows(x)
    m, n = rows.shape
    y = torch.empty_like(rows, memory_format=torch.contiguous_format)
    mean = torch.empty(m, dtype=torch.float32, device=x.device)
    rstd = torch.empty_like(mean)
    _ln_stats_and_apply[(m,)](rows, weight, bias, y, mean, rstd, rows.stride(0), y.stride(0),
                              n, eps, CHUNK=CHUNK)
    return y.reshape(x.shape), mean, rstd


def rms_norm(x, weight, eps=1e-6):
    rows = _as_rows(x)
    m, n = rows.shape
    y = torch.empty_like(rows, memory_format=torch.contiguous_format)
    _rms_apply[(m,)](rows, weight, y, rows.stride(0), y.stride(0), n, eps, CHUNK=CHUNK)
    return y.reshape(x.shape)
