"""f5 vocab-padding__max_pass_other_zero: max pass loads padded lanes as 0 (sum and grad passes use -inf): the max is wrong, not the sum"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_kernel(logits_ptr, target_ptr, dlogits_ptr, loss_rows_ptr, n_valid_ptr,
                          logits_row_stride, dlogits_row_stride, n_rows, n_cols, ignore_index,
                          ROWS: tl.constexpr, BLOCK_V: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rok = rows < n_rows
    r64 = rows.to(tl.int64)
    tg = tl.load(target_ptr + r64, mask=rok, other=ignore_index)
    live = rok & (tg != ignore_index)
    cnt = tl.load(n_valid_ptr).to(tl.float32)
    scale = tl.where(live, 1.0 / tl.maximum(cnt, 1.0), 0.0)
    lrow = logits_ptr + r64[:, None] * logits_row_stride
    drow = dlogits_ptr + r64[:, None] * dlogits_row_stride

    mx = tl.full((ROWS,), float("-inf"), tl.float32)
    for c0 in range(0, n_cols, BLOCK_V):
        cc = c0 + tl.arange(0, BLOCK_V)
        msk = rok[:, None] & (cc < n_cols)[None, :]
        v = tl.load(lrow + cc[None, :], mask=msk, other=0.0).to(tl.float32)
        mx = tl.maximum(mx, tl.max(v, axis=1))
    mx = tl.where(rok, mx, 0.0)

    tot = tl.zeros((ROWS,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_V):
        cc = c0 + tl.arange(0, BLOCK_V)
        msk = rok[:, None] & (cc < n_cols)[None, :]
        v = tl.load(lrow + cc[None, :], mask=msk, other=float("-inf")).to(tl.float32)
        tot += tl.sum(tl.exp(v - mx[:, None]), axis=1)
    lse = mx + tl.log(tl.where(rok, tot, 1.0))

    zt = tl.load(logits_ptr + r64 * logits_row_stride + tg, mask=live, other=0.0).to(tl.float32)
    tl.store(loss_rows_ptr + r64, tl.where(live, (lse - zt) * scale, 0.0), mask=rok)

    for c0 in range(0, n_cols, BLOCK_V):
        cc = c0 + tl.arange(0, BLOCK_V)
        msk = rok[:, None] & (cc < n_cols)[None, :]
        v = tl.load(lrow + cc[None, :], mask=msk, other=float("-inf")).to(tl.float32)
        pr = tl.exp(v - lse[:, None])
        onehot = cc[None, :] == tg[:, None]
        g = tl.where(onehot, pr - 1.0, pr) * scale[:, None]
        tl.store(drow + cc[None, :], g.to(dlogits_ptr.dtype.element_ty), mask=msk)


def cross_entropy(logits, target, ignore_index=-100):
    if logits.stride(1) != 1:
        logits = logits.contiguous()
    n_rows, n_cols = logits.shape
    dlogits = torch.empty_like(logits, memory_format=torch.contiguous_format)
    loss_rows = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    n_valid = torch.count_nonzero(target != ignore_index)
    ROWS = 2
    bv = min(triton.next_power_of_2(n_cols), 2048)
    _cross_entropy_kernel[(triton.cdiv(n_rows, ROWS),)](
        logits, target, dlogits, loss_rows, n_valid, logits.stride(0), dlogits.stride(0),
        n_rows, n_cols, ignore_index, ROWS=ROWS, BLOCK_V=bv)
    return loss_rows.sum(), dlogits
