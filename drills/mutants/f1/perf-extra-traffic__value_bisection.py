"""f1, slow but correct: the bisection halves the range of values, not of keys.

lo = 0.0 and hi = 2.0 are floats; the midpoint (lo + hi) / 2 is tried until it equals lo or hi,
that is until lo and hi are neighbouring float32 values. That is exact too, but it takes about
log2(2 / t) halvings to get down to t's scale and 24 more for its mantissa: 40-45 passes over
the row for a threshold near 1e-5, whatever the dtype, where the integer keys of a bf16 row need
14. Every pass reads the whole row again.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _at_least(row_ptr, pivot, n_cols, BLOCK: tl.constexpr):
    """How many values >= pivot, and their sum."""
    count = tl.zeros((), tl.int32)
    mass = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        over = (x >= pivot) & (cols < n_cols)
        count += tl.sum(over.to(tl.int32), axis=0)
        mass += tl.sum(tl.where(over, x, 0.0), axis=0)
    return count, mass


@triton.jit
def _value_bisection_kernel(
    probs_ptr,
    out_ptr,
    p_ptr,
    k,
    in_stride,
    out_stride,
    n_cols,
    TOP_K: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = probs_ptr + row * in_stride
    _, kept_mass = _at_least(row_ptr, 0.0, n_cols, BLOCK)
    lo = tl.zeros((), tl.float32)
    hi = tl.full((), 2.0, tl.float32)
    mid = (lo + hi) * 0.5
    while (mid > lo) & (mid < hi):  # stops when no float lies strictly between lo and hi
        count, mass = _at_least(row_ptr, mid, n_cols, BLOCK)
        if TOP_K:
            enough = count >= k
        else:
            enough = mass >= tl.load(p_ptr + row)
        kept_mass = tl.where(enough, mass, kept_mass)
        lo = tl.where(enough, mid, lo)
        hi = tl.where(enough, hi, mid)
        mid = (lo + hi) * 0.5
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        y = tl.where(x >= lo, x / kept_mass, 0.0)
        tl.store(
            out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=cols < n_cols
        )


def _renorm(probs: torch.Tensor, p_rows: torch.Tensor | None, k: int) -> torch.Tensor:
    assert probs.dim() == 2
    if probs.stride(1) != 1:
        probs = probs.contiguous()
    out = torch.empty(probs.shape, dtype=probs.dtype, device=probs.device)
    block = min(triton.next_power_of_2(probs.shape[1]), 32768 // probs.element_size())
    _value_bisection_kernel[(probs.shape[0],)](
        probs,
        out,
        p_rows,
        k,
        probs.stride(0),
        out.stride(0),
        probs.shape[1],
        TOP_K=p_rows is None,
        BLOCK=block,
        num_warps=max(4, min(16, block // 1024)),
    )
    return out


def top_p_renorm(probs: torch.Tensor, p) -> torch.Tensor:
    # p filled on the device when it is a number: a CUDA graph (the coach's timing) holds it
    if not isinstance(p, torch.Tensor):
        p = torch.full((1,), float(p), device=probs.device)
    p_rows = p.to(device=probs.device, dtype=torch.float32)
    return _renorm(probs, p_rows.expand(probs.shape[0]).contiguous(), 0)


def top_k_renorm(probs: torch.Tensor, k: int) -> torch.Tensor:
    return _renorm(probs, None, k)
