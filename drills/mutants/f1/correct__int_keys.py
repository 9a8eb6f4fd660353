"""f1, correct: the bisection compares integer keys, not floats.

Each value is widened to float32, its bits read as an int32 and shifted right past the bits its
dtype leaves at zero; the search compares those keys with an integer pivot. The count is kept
per lane across the blocks and summed once at the end of a pass. The search only counts (top-k)
or only sums (top-p); the mass of what is kept is summed in a pass of its own before the write.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _keys(row_ptr, cols, n_cols, SHIFT: tl.constexpr):
    """The values at cols (0.0 past the row) in float32, and their integer keys."""
    x = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    return x, x.to(tl.int32, bitcast=True) >> SHIFT


@triton.jit
def _pass(
    row_ptr, pivot_key, n_cols, WANT_COUNT: tl.constexpr, SHIFT: tl.constexpr, BLOCK: tl.constexpr
):
    """The count (WANT_COUNT) or the mass of the values whose key is >= pivot_key."""
    cols = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x, key = _keys(row_ptr, start + cols, n_cols, SHIFT)
        over = (key >= pivot_key) & (start + cols < n_cols)
        if WANT_COUNT:
            total += over.to(tl.float32)
        else:
            total += tl.where(over, x, 0.0)
    return tl.sum(total, axis=0)


@triton.jit
def _kernel(
    probs_ptr,
    out_ptr,
    p_ptr,
    k,
    stride_in,
    stride_out,
    n_cols,
    IS_TOP_K: tl.constexpr,
    SHIFT: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    row_ptr = probs_ptr + pid * stride_in
    lo = tl.zeros((), tl.int32)
    hi = tl.full((), 1 << (30 - SHIFT), tl.int32)
    if IS_TOP_K:
        goal = k * 1.0  # the counts are float32 sums: exact up to 2**24
    else:
        goal = tl.load(p_ptr + pid)
    for _ in range(30 - SHIFT):
        mid = lo + (hi - lo) // 2
        reached = _pass(row_ptr, mid, n_cols, IS_TOP_K, SHIFT, BLOCK) >= goal
        lo = tl.where(reached, mid, lo)
        hi = tl.where(reached, hi, mid)
    kept_mass = _pass(row_ptr, lo, n_cols, False, SHIFT, BLOCK)

    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        x, key = _keys(row_ptr, start + cols, n_cols, SHIFT)
        y = tl.where(key >= lo, x / kept_mass, 0.0)
        tl.store(
            out_ptr + pid * stride_out + start + cols,
            y.to(out_ptr.dtype.element_ty),
            mask=start + cols < n_cols,
        )


SHIFT = {torch.float32: 0, torch.bfloat16: 16, torch.float16: 13}


def _run(probs: torch.Tensor, p_rows, k: int, is_top_k: bool) -> torch.Tensor:
    if probs.ndim != 2:
        raise ValueError("probs must be [B, V]")
    probs = probs if probs.stride(1) == 1 else probs.contiguous()
    out = torch.empty_like(probs, memory_format=torch.contiguous_format)
    block = min(2048, triton.next_power_of_2(probs.shape[1]))
    _kernel[(probs.shape[0],)](
        probs,
        out,
        p_rows,
        k,
        probs.stride(0),
        out.stride(0),
        probs.shape[1],
        IS_TOP_K=is_top_k,
        SHIFT=SHIFT[probs.dtype],
        BLOCK=block,
        num_warps=4,
    )
    return out


def top_p_renorm(probs: torch.Tensor, p) -> torch.Tensor:
    p_rows = torch.empty(probs.shape[0], dtype=torch.float32, device=probs.device)
    p_rows.copy_(torch.as_tensor(p, dtype=torch.float32))
    return _run(probs, p_rows, 0, False)


def top_k_renorm(probs: torch.Tensor, k: int) -> torch.Tensor:
    return _run(probs, probs, k, True)
