"""Drill f1: top-p and top-k renormalisation of sampling probabilities, without a sort.

Before a token is sampled, each row of probabilities [B, V] is cut down to its most likely
tokens and renormalised. Both cuts are a threshold t per row:

    top_k_renorm: t = the k-th largest value of the row (k >= V: the whole row)
    top_p_renorm: t = the largest value whose kept mass sum(probs[probs >= t]) is >= p
    out = probs / sum(probs[probs >= t])   where probs >= t,   0 elsewhere

Every token tied with t is kept with it, so a row may keep more than k tokens. With p = 1 every
non-zero probability is kept. Sums are in fp32.

Do not sort. Find t by bisection: a float >= 0 compares like its bits read as an integer, so
search the integer keys. Keep a range [lo, hi) of keys that holds t's key: lo = 0 (the value
0.0, which keeps the whole row) and hi = 2**30 (the key of 2.0, above any probability). Each
step tries the middle key as a pivot: one pass over the row counts the values >= the pivot and
sums them; if that is enough (count >= k, or mass >= p), t is at or above the pivot (lo = mid),
else below it (hi = mid). A float32 key has 30 bits that can change, so 30 halvings leave one
key: t's, exactly. A bf16 value widened to float32 has its low 16 bits zero: search key >> 16
instead, 14 halvings. The mass measured at the last lo is the normaliser; one more pass writes.

One program per row; V reaches 256k, so every pass loops over the row in blocks of BLOCK_V.
The tests use odd V (your last block has padded lanes), ties, rows of powers of two whose
prefix masses equal p exactly, rows up to 40001 wide, bf16 rows, and row-sliced inputs.

Replace every `# TODO` and delete the `raise NotImplementedError` lines. The lesson is
drills/content/f1.md; check your work with `tutor check f1`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _count_and_mass_at_least(row_ptr, pivot, n_cols, BLOCK_V: tl.constexpr):
    """(count, mass): how many of the row's n_cols values are >= pivot, and their fp32 sum."""
    # TODO: a loop over blocks of BLOCK_V columns: offsets, a mask, a load whose padded lanes
    #       can never count as tokens, in fp32.
    # TODO: add up how many values are >= pivot (an int32 count) and their sum (fp32).
    pass


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
    """Row tl.program_id(0): out[row] = its renormalised top-k (TOP_K) or top-p cut.

    Row r of probs starts at probs_ptr + r * probs_row_stride (the stride may exceed n_cols);
    top_p_ptr points at one p per row (unused for top-k). KEY_SHIFT: the zero bits at the
    bottom of the dtype's values widened to float32 (0 for float32, 16 for bf16, 13 for fp16).
    """
    # TODO: row_idx = tl.program_id(0).to(tl.int64); pointers to this row of probs and out.
    # TODO: lo = 0 keeps the whole row: its mass (a pass at pivot 0.0) is the normaliser
    #       until lo moves. lo and hi as int32 scalars (tl.zeros((), tl.int32), tl.full).
    # TODO: 30 - KEY_SHIFT steps: mid = (lo + hi) // 2; its float:
    #       (mid << KEY_SHIFT).to(tl.float32, bitcast=True); count and sum the values >= it;
    #       enough (count >= top_k, or mass >= p) moves lo up to mid and keeps that mass,
    #       else hi comes down to mid.
    # TODO: t = lo's float; a last pass writes probs / mass where probs >= t, else 0, in
    #       out's dtype, with the mask.
    pass


def top_p_renorm(probs: torch.Tensor, p: float | torch.Tensor) -> torch.Tensor:
    """Keep each row's smallest set of largest probabilities whose mass reaches p; renormalise.

        t   = the largest t with sum(probs[probs >= t]) >= p   (sums in fp32)
        out = probs / sum(probs[probs >= t]) where probs >= t, else 0

    probs: [B, V] float32 / bfloat16 (/ float16), rows of non-negative values summing to 1;
    rows may be strided, each row contiguous. p: a float in (0, 1], or a [B] tensor of one p
    per row. Tokens tied with t are all kept. When no positive t reaches p (p = 1 on a row
    whose fp32 sum falls short of 1), every non-zero probability is kept. Returns a new [B, V]
    tensor of probs' dtype.
    """
    # TODO: check probs is 2-D and a float dtype; make it contiguous only if stride(-1) != 1.
    # TODO: p as a [B] float32 tensor on probs' device (a float is the same p for every row).
    # TODO: allocate out; BLOCK_V = min(next_power_of_2(V), 32 KB of values); num_warps about
    #       BLOCK_V // 1024, between 4 and 16; KEY_SHIFT from probs' dtype.
    # TODO: launch one program per row with TOP_K=False; return out.
    raise NotImplementedError("TODO: write top_p_renorm and its kernel")


def top_k_renorm(probs: torch.Tensor, k: int) -> torch.Tensor:
    """Keep each row's k largest probabilities (and every token tied with the k-th); renormalise.

        t   = the k-th largest value of the row
        out = probs / sum(probs[probs >= t]) where probs >= t, else 0

    probs: as for top_p_renorm. k: an int >= 1; k >= V keeps the whole row. A row keeps more
    than k tokens when some are tied with the k-th. Returns a new [B, V] tensor of probs' dtype.
    """
    # TODO: the same launch as top_p_renorm, with TOP_K=True and k (no p).
    raise NotImplementedError("TODO: write top_k_renorm (the same kernel, TOP_K=True)")
