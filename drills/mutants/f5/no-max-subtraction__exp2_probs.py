"""f5 with exp2 and no max: the sum of 2^(x log2 e) overflows, probabilities are exp(x) / sum.

Rows near +200 give inf / inf = NaN; rows near -200 give 0 / 0 = NaN. Blocks of 256, the loss
divided on the host by max(n_valid, 1).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _xent(logits, labels, grads, losses, scale_ptr, stride_l, stride_g, vocab, ignore,
          BLOCK_V: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    label = tl.load(labels + i)
    row_in = logits + i * stride_l
    row_out = grads + i * stride_g
    lanes = tl.arange(0, BLOCK_V)
    if label != ignore:
        scale = tl.load(scale_ptr)
        denom = 0.0
        for v0 in range(0, vocab, BLOCK_V):
            x = tl.load(row_in + v0 + lanes, mask=v0 + lanes < vocab,
                        other=-float("inf")).to(tl.float32)
            denom += tl.sum(tl.exp2(x * 1.4426950408889634), axis=0)
        x_label = tl.load(row_in + label).to(tl.float32)
        tl.store(losses + i, tl.log2(denom) * 0.6931471805599453 - x_label)
        for v0 in range(0, vocab, BLOCK_V):
            cols = v0 + lanes
            x = tl.load(row_in + cols, mask=cols < vocab, other=-float("inf")).to(tl.float32)
            p = tl.exp2(x * 1.4426950408889634) / denom
            g = tl.where(cols == label, p - 1.0, p) * scale
            tl.store(row_out + cols, g.to(grads.dtype.element_ty), mask=cols < vocab)
    else:
        tl.store(losses + i, 0.0)
        for v0 in range(0, vocab, BLOCK_V):
            cols = v0 + lanes
            tl.store(row_out + cols, tl.zeros((BLOCK_V,), tl.float32)
                     .to(grads.dtype.element_ty), mask=cols < vocab)


def cross_entropy(logits, target, ignore_index=-100):
    if logits.stride(-1) != 1:
        logits = logits.contiguous()
    T, V = logits.shape
    grads = torch.empty((T, V), dtype=logits.dtype, device=logits.device)
    losses = torch.empty(T, dtype=torch.float32, device=logits.device)
    n_valid = (target != ignore_index).sum().clamp(min=1)
    scale = 1.0 / n_valid.float()
    _xent[(T,)](logits, target, grads, losses, scale, logits.stride(0), grads.stride(0), V,
                ignore_index, BLOCK_V=256, num_warps=4)
    return losses.sum() / n_valid, grads
