"""f5 that divides the loss by n_valid on the host but leaves the kernel's gradient undivided.

The kernel writes raw per-row losses and softmax - onehot; the host takes
loss_rows.sum() / max(n_valid, 1). The loss is right; every gradient is n_valid times too big.
Blocks of 2048, several rows per program.
"""

import torch
import triton
import triton.language as tl

ROWS_PER_PROGRAM = 2


@triton.jit
def _kernel(logits_ptr, target_ptr, grad_ptr, loss_ptr, n_rows, logits_stride, grad_stride,
            n_cols, ignore_index, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    for r in range(ROWS):
        row = tl.program_id(0).to(tl.int64) * ROWS + r
        if row < n_rows:
            tgt = tl.load(target_ptr + row)
            keep = tgt != ignore_index
            src = logits_ptr + row * logits_stride
            dst = grad_ptr + row * grad_stride
            m = -float("inf")
            s = 0.0
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                x = tl.load(src + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
                m2 = tl.maximum(m, tl.max(x, axis=0))
                s = s * tl.exp(m - m2) + tl.sum(tl.exp(x - m2), axis=0)
                m = m2
            lse = m + tl.log(s)
            x_t = tl.load(src + tgt, mask=keep, other=0.0).to(tl.float32)
            tl.store(loss_ptr + row, tl.where(keep, lse - x_t, 0.0))
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                inside = cols < n_cols
                x = tl.load(src + cols, mask=inside, other=-float("inf")).to(tl.float32)
                g = tl.exp(x - lse) - (cols == tgt).to(tl.float32)
                g = tl.where(keep, g, 0.0)
                tl.store(dst + cols, g.to(grad_ptr.dtype.element_ty), mask=inside)


def cross_entropy(logits, target, ignore_index=-100):
    if logits.stride(-1) != 1:
        logits = logits.contiguous()
    n_rows, n_cols = logits.shape
    grad = torch.empty((n_rows, n_cols), dtype=logits.dtype, device=logits.device)
    loss_rows = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    grid = (triton.cdiv(n_rows, ROWS_PER_PROGRAM),)
    _kernel[grid](logits, target, grad, loss_rows, n_rows, logits.stride(0), grad.stride(0),
                  n_cols, ignore_index, ROWS=ROWS_PER_PROGRAM, BLOCK=2048, num_warps=8)
    n_valid = (target != ignore_index).sum().clamp(min=1)
    return loss_rows.sum() / n_valid, grad
