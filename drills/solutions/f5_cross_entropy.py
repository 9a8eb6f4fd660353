"""Reference solution for drill f5: softmax cross-entropy and its gradient in one kernel.

    lse[t]     = log(sum_j exp(logits[t, j]))
    loss       = sum over counted rows t of (lse[t] - logits[t, target[t]]) / n_valid
    dlogits[t] = (softmax(logits[t]) - onehot(target[t])) / n_valid     for counted rows
    dlogits[t] = 0                                                       for ignored rows

A row is counted when target[t] != ignore_index; n_valid is the number of counted rows. When no
row is counted the loss is 0 and dlogits is all zeros (torch gives NaN there; a batch whose
tokens are all masked should add nothing to training, not poison it).

One program per row loops over the vocabulary in blocks of BLOCK_V. Pass 1 keeps a running max
and a running sum of exp(x - max), rescaling the sum whenever the max grows (an online
logsumexp); pass 2 reads the row again and writes the gradient, so no [T, V] softmax is ever
stored. Padded lanes of the last block load as -inf: exp(-inf) = 0 adds nothing.

Pass 2 walks the blocks last to first, and both passes tell the L2 cache how long to keep what
they read (see the kernel): more of the second read then comes from L2 instead of DRAM.
Measured on an H200 (T = 4096, V = 128256, bf16; % of copy bandwidth): 60.7% as two plain
forward passes, 64.4% with pass 2 reversed, 64.1% with the hints alone, 67.7% with both.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

MAX_BLOCK_V = 32768  # Liger-Kernel's MAX_FUSED_SIZE: 32 values per thread at 32 warps


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
    row_idx = tl.program_id(0).to(tl.int64)  # int64: row_idx * stride passes 2**31 at 128k vocab
    logits_row = logits_ptr + row_idx * logits_row_stride
    dlogits_row = dlogits_ptr + row_idx * dlogits_row_stride
    target = tl.load(target_ptr + row_idx)

    if target == ignore_index:  # an ignored row: no loss, a zero gradient, nothing to read
        for start in range(0, n_cols, BLOCK_V):
            offsets = start + tl.arange(0, BLOCK_V)
            zeros = tl.zeros((BLOCK_V,), dtype=dlogits_ptr.dtype.element_ty)
            tl.store(dlogits_row + offsets, zeros, mask=offsets < n_cols)
        tl.store(loss_rows_ptr + row_idx, 0.0)
        return

    # Pass 1: the online logsumexp. running_sum is sum(exp(x - running_max)) so far.
    # evict_last: ask L2 to keep these lines longer than others, since pass 2 reads them again.
    running_max = float("-inf")
    running_sum = 0.0
    for start in range(0, n_cols, BLOCK_V):
        offsets = start + tl.arange(0, BLOCK_V)
        mask = offsets < n_cols
        x = tl.load(
            logits_row + offsets, mask=mask, other=float("-inf"), eviction_policy="evict_last"
        ).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(
            tl.exp(x - new_max), axis=0
        )
        running_max = new_max
    lse = running_max + tl.log(running_sum)

    inv_n = 1.0 / tl.load(n_valid_ptr).to(tl.float32)  # only counted rows get here: n >= 1
    target_logit = tl.load(logits_row + target).to(tl.float32)
    tl.store(loss_rows_ptr + row_idx, (lse - target_logit) * inv_n)

    # Pass 2: the gradient, softmax minus the one-hot, scaled by 1 / n_valid. The blocks go last
    # to first: the ones pass 1 read most recently are the likeliest to be still in L2.
    # evict_first: this is the row's last read, its lines may go before anything else.
    n_blocks = tl.cdiv(n_cols, BLOCK_V)
    for block in range(0, n_blocks):
        start = (n_blocks - 1 - block) * BLOCK_V
        offsets = start + tl.arange(0, BLOCK_V)
        mask = offsets < n_cols
        x = tl.load(
            logits_row + offsets, mask=mask, other=float("-inf"), eviction_policy="evict_first"
        ).to(tl.float32)
        probs = tl.exp(x - lse)
        grad = tl.where(offsets == target, probs - 1.0, probs) * inv_n
        tl.store(dlogits_row + offsets, grad.to(dlogits_ptr.dtype.element_ty), mask=mask)


def _num_warps(block_v: int) -> int:
    """Warps for blocks of block_v lanes: 32 values per thread at Liger's 32768-lane block."""
    return max(4, min(32, block_v // 1024))


def cross_entropy(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean softmax cross-entropy over the counted rows, and its gradient.

        loss    = mean over rows t with target[t] != ignore_index of
                  logsumexp(logits[t]) - logits[t, target[t]]
        dlogits = (softmax(logits[t]) - onehot(target[t])) / n_valid, 0 on ignored rows

    logits: [T, V], float32 / float16 / bfloat16; rows may be strided (a slice of wider rows),
    each row contiguous. target: [T] int64, each in [0, V) or equal to ignore_index.
    Returns (loss, dlogits): loss a 0-dim float32 tensor (0 when no row is counted), dlogits a
    new contiguous [T, V] tensor of logits' dtype.
    """
    if logits.dim() != 2 or target.shape != (logits.shape[0],):
        raise ValueError(
            f"logits must be [T, V] and target [T]; got {tuple(logits.shape)} "
            f"and {tuple(target.shape)}"
        )
    if target.device != logits.device:
        raise ValueError(f"target is on {target.device}, logits on {logits.device}")
    if logits.stride(-1) != 1:
        logits = logits.contiguous()
    n_rows, n_cols = logits.shape
    dlogits = torch.empty((n_rows, n_cols), dtype=logits.dtype, device=logits.device)
    loss_rows = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    # Counted on the device, read by the kernel: no host sync. 0 is never divided by.
    n_valid = (target != ignore_index).sum()
    block_v = _block_v(n_cols)
    _cross_entropy_kernel[(n_rows,)](
        logits,
        target,
        dlogits,
        loss_rows,
        n_valid,
        logits.stride(0),
        dlogits.stride(0),
        n_cols,
        ignore_index,
        BLOCK_V=block_v,
        num_warps=_num_warps(block_v),
    )
    return loss_rows.sum(), dlogits


def _block_v(n_cols: int) -> int:
    """Blocks of MAX_BLOCK_V for long rows; a row that would fit one such block goes in two.

    A whole row in one block of 32768 lanes at 32 warps fills an SM's registers: one program
    per SM, whose loads, reductions and stores then run one after another. In two blocks of
    16 warps, two programs share the SM and one's loads overlap the other's arithmetic. On an
    H100 at V = 32000 (bf16): 233 us in one block, 196 us in two (88% of copy bandwidth);
    at V = 128256 blocks of 32768 at 32 warps stay the fastest (837 against 882 us).
    """
    whole_row = triton.next_power_of_2(n_cols)
    if whole_row > MAX_BLOCK_V:
        return MAX_BLOCK_V
    return max(whole_row // 2, 16)
