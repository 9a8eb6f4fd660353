"""Drill f5: softmax cross-entropy and its gradient, fused in one kernel.

For logits [T, V] and target [T], a row t is counted when target[t] != ignore_index, and
n_valid is the number of counted rows:

    lse[t]     = log(sum_j exp(logits[t, j]))                   (an online logsumexp)
    loss       = sum over counted t of (lse[t] - logits[t, target[t]]) / n_valid
    dlogits[t] = (softmax(logits[t]) - onehot(target[t])) / n_valid    (counted rows)
    dlogits[t] = 0                                                     (ignored rows)

When no row is counted, loss is 0 and dlogits all zeros (torch gives NaN there; this drill asks
for 0, so a batch of masked tokens adds nothing to training).

One program per row loops over the vocabulary in blocks of BLOCK_V lanes (V reaches 128k, far
more than one block): pass 1 finds the logsumexp, pass 2 reads the row again and writes the
gradient. BLOCK_V is a power of two of at most 32768 (Liger-Kernel's limit); the tests use
vocabularies that are odd and up to 40001 wide, so your last block always has padded lanes
and long rows always take several blocks.

Replace every `# TODO` and delete the `raise NotImplementedError` line. The lesson is
drills/content/f5.md; check your work with `tutor check f5`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_kernel(
    logits_ptr,
    target_ptr,
    dlogits_ptr,
    loss_rows_ptr,
    n_valid_ptr,
    logits_row_stride,
    dlogits_row_stride,
    n_cols,
    ignore_index,
    BLOCK_V: tl.constexpr,
):
    """Row tl.program_id(0): its loss / n_valid into loss_rows[row], its gradient into dlogits.

    Row r of logits starts at logits_ptr + r * logits_row_stride (the stride may exceed n_cols).
    n_valid_ptr points at the number of counted rows (one integer on the device).
    """
    # TODO: row_idx = tl.program_id(0).to(tl.int64); pointers to this row of logits and
    #       of dlogits; load this row's target.
    # TODO: an ignored row (target == ignore_index): store zeros over the whole dlogits row
    #       (a loop over blocks), 0.0 into loss_rows, and return. Never read logits[target].
    # TODO: pass 1, a loop over blocks: offsets = start + tl.arange(0, BLOCK_V), a mask, a
    #       load whose padded lanes can neither win the max nor add to the sum, in fp32.
    #       Keep a running max m and a running sum s of exp(x - m): when a block raises the
    #       max to m_new, the old sum must be rescaled by exp(m - m_new) before adding.
    # TODO: lse = m + log(s); the row's loss is (lse - logits[target]) / n_valid.
    # TODO: pass 2, the same loop: (exp(x - lse) - [column == target]) / n_valid, stored in
    #       dlogits' dtype with the mask.
    pass


def cross_entropy(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean softmax cross-entropy over the counted rows, and its gradient.

    logits: [T, V], float32 / float16 / bfloat16; rows may be strided (a slice of wider rows),
    each row contiguous. target: [T] int64, each in [0, V) or equal to ignore_index.
    Returns (loss, dlogits): loss a 0-dim float32 tensor (0 when no row is counted), dlogits a
    new [T, V] tensor of logits' dtype.
    """
    # TODO: check shapes; make logits contiguous only if logits.stride(-1) != 1.
    # TODO: allocate dlogits (logits' dtype) and loss_rows ([T] float32).
    # TODO: n_valid = (target != ignore_index).sum(): a device tensor the kernel loads (no
    #       .item(), no host sync).
    # TODO: BLOCK_V = min(triton.next_power_of_2(V), 32768); num_warps about BLOCK_V // 1024,
    #       between 4 and 32.
    # TODO: launch one program per row, passing strides, BLOCK_V and num_warps by keyword;
    #       return (loss_rows.sum(), dlogits).
    raise NotImplementedError("TODO: write cross_entropy and its kernel")
