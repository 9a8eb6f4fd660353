"""Reference solution for drill f1: top-p and top-k renormalisation without a sort.

Per row of probabilities, keep the largest ones and renormalise them to sum 1:

    top_k_renorm: keep probs >= t, t = the k-th largest value of the row
    top_p_renorm: keep probs >= t, t = the largest value whose kept mass
                  sum(probs[probs >= t]) is still >= p
    out = where(probs >= t, probs / sum(probs[probs >= t]), 0)

A threshold decides, never a position: every token tied with t is kept with it.

The threshold is found by bisection, and each step is one reduction over the row. A
non-negative float compares like its bit pattern read as an integer (the exponent sits above
the mantissa), so the search runs on those integer keys: every step halves the range of keys
that t can still have. A probability's float32 key is below 2**30 (1.0 is 0x3F800000), so 30
halvings leave exactly one key: t, exact. A bf16 value widened to float32 has 16 zero bits at
the bottom, so its key is the top 16 bits and 14 halvings suffice; float16's 13 zero bits
leave 17. Each step counts the values >= the pivot (top-k) and sums them (top-p); the sum at
the final pivot is the normaliser, so the last pass only reads, divides and writes.

One program per row walks the row in blocks of BLOCK_V columns, once for the whole row's
mass, once per step, and once to write. Rows are 32k-256k wide: the steps re-read it from L2.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _count_and_mass_at_least(row_ptr, pivot, n_cols, BLOCK_V: tl.constexpr):
    """How many of the row's n_cols values are >= pivot, and their sum, in fp32."""
    count = tl.zeros((), tl.int32)
    mass = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK_V):
        offsets = start + tl.arange(0, BLOCK_V)
        mask = offsets < n_cols
        x = tl.load(row_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        kept = (x >= pivot) & mask  # a padded lane is no token, even for pivot 0
        count += tl.sum(kept.to(tl.int32), axis=0)
        mass += tl.sum(tl.where(kept, x, 0.0), axis=0)
    return count, mass


@triton.jit
def _renorm_kernel(
    probs_ptr,
    out_ptr,
    top_p_ptr,
    top_k,
    probs_row_stride,
    out_row_stride,
    n_cols,
    TOP_K: tl.constexpr,
    KEY_SHIFT: tl.constexpr,
    BLOCK_V: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)  # int64: row_idx * stride may pass 2**31
    probs_row = probs_ptr + row_idx * probs_row_stride
    out_row = out_ptr + row_idx * out_row_stride

    # Keys in [lo, hi): t's key is in there. lo = 0 (the value 0.0) keeps the whole row, which
    # is the answer when no positive threshold qualifies (k >= V, or p = 1 when the row's fp32
    # sum falls short of 1); hi = 2**30 >> KEY_SHIFT is the key of 2.0, above any probability.
    _, kept_mass = _count_and_mass_at_least(probs_row, 0.0, n_cols, BLOCK_V)
    lo = tl.zeros((), tl.int32)
    hi = tl.full((), 1 << (30 - KEY_SHIFT), tl.int32)
    if not TOP_K:
        top_p = tl.load(top_p_ptr + row_idx)
    for _ in range(30 - KEY_SHIFT):  # each step halves hi - lo: one key is left at the end
        mid = (lo + hi) // 2
        pivot = (mid << KEY_SHIFT).to(tl.float32, bitcast=True)
        count, mass = _count_and_mass_at_least(probs_row, pivot, n_cols, BLOCK_V)
        if TOP_K:
            enough = count >= top_k
        else:
            enough = mass >= top_p
        if enough:  # the pivot keeps enough: t is at or above it
            lo = mid
            kept_mass = mass
        else:
            hi = mid
    threshold = (lo << KEY_SHIFT).to(tl.float32, bitcast=True)

    for start in range(0, n_cols, BLOCK_V):
        offsets = start + tl.arange(0, BLOCK_V)
        mask = offsets < n_cols
        x = tl.load(probs_row + offsets, mask=mask, other=0.0).to(tl.float32)
        y = tl.where(x >= threshold, x / kept_mass, 0.0)
        tl.store(out_row + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


# Zero bits at the bottom of a float32 widened from each dtype: the search skips them.
KEY_SHIFT = {torch.float32: 0, torch.bfloat16: 16, torch.float16: 13}
# Blocks of 32 KB of the row (16384 bf16 or 8192 fp32 values), up to 16 warps: T4's long-row
# blocks, the fastest it measured on an H200. One program per row leaves each SM one program
# at B = 64, so it is the loads in flight within a block that keep the L2 busy.
BYTES_PER_BLOCK = 32768


def _launch(probs: torch.Tensor, top_p: torch.Tensor | None, top_k: int) -> torch.Tensor:
    if probs.dim() != 2:
        raise ValueError(f"probs must be [B, V], got shape {tuple(probs.shape)}")
    if probs.dtype not in KEY_SHIFT:
        raise TypeError(f"probs must be float32, bfloat16 or float16, got {probs.dtype}")
    if probs.stride(-1) != 1:
        probs = probs.contiguous()
    n_rows, n_cols = probs.shape
    out = torch.empty((n_rows, n_cols), dtype=probs.dtype, device=probs.device)
    block_v = min(triton.next_power_of_2(n_cols), BYTES_PER_BLOCK // probs.element_size())
    _renorm_kernel[(n_rows,)](
        probs,
        out,
        top_p,
        top_k,
        probs.stride(0),
        out.stride(0),
        n_cols,
        TOP_K=top_p is None,
        KEY_SHIFT=KEY_SHIFT[probs.dtype],
        BLOCK_V=block_v,
        num_warps=max(4, min(16, block_v // 1024)),
    )
    return out


def top_p_renorm(probs: torch.Tensor, p: float | torch.Tensor) -> torch.Tensor:
    """Keep each row's smallest set of largest probabilities whose mass reaches p; renormalise.

        t   = the largest t with sum(probs[probs >= t]) >= p   (sums in fp32)
        out = probs / sum(probs[probs >= t]) where probs >= t, else 0

    probs: [B, V] float32 / bfloat16 / float16, rows of non-negative values summing to 1; rows
    may be strided, each row contiguous. p: a float in (0, 1], or a [B] tensor of one p per
    row. Tokens tied with t are all kept. When no positive t reaches p (p = 1 on a row whose
    fp32 sum falls short of 1), every non-zero probability is kept. Returns a new [B, V] tensor
    of probs' dtype.
    """
    n_rows = probs.shape[0] if probs.dim() == 2 else 0
    if isinstance(p, torch.Tensor):
        top_p = p.to(device=probs.device, dtype=torch.float32).expand(n_rows)
    else:  # filled on the device: no copy from the host, so a CUDA graph can hold the call
        top_p = torch.full((n_rows,), float(p), dtype=torch.float32, device=probs.device)
    return _launch(probs, top_p.contiguous(), 0)


def top_k_renorm(probs: torch.Tensor, k: int) -> torch.Tensor:
    """Keep each row's k largest probabilities (and every token tied with the k-th); renormalise.

        t   = the k-th largest value of the row
        out = probs / sum(probs[probs >= t]) where probs >= t, else 0

    probs: [B, V] float32 / bfloat16 / float16, rows of non-negative values summing to 1; rows
    may be strided, each row contiguous. k: an int >= 1; k >= V keeps the whole row. A row keeps
    more than k tokens when some are tied with the k-th. Returns a new [B, V] tensor of probs'
    dtype.
    """
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return _launch(probs, None, int(k))
