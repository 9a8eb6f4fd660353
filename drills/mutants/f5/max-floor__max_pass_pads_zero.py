"""f5 in three sweeps (max, sum, gradient) over blocks of 1024; the max sweep loads padding as 0.

The sum and gradient sweeps load the padded lanes as -inf, so nothing extra joins the sum, but
the max sweep's `other=0.0` puts a 0 into every row's max: rows whose logits are all far below
0 subtract 0 instead of their own max, and exp(x - 0) underflows.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _xent_rows(
    z_ptr,
    y_ptr,
    dz_ptr,
    part_ptr,
    valid_ptr,
    z_stride,
    dz_stride,
    vocab,
    skip,
    BLOCK: tl.constexpr,
):
    i = tl.program_id(0).to(tl.int64)
    z_row = z_ptr + i * z_stride
    dz_row = dz_ptr + i * dz_stride
    y = tl.load(y_ptr + i)
    keep = y != skip
    inv = tl.where(keep, 1.0 / tl.maximum(tl.load(valid_ptr).to(tl.float32), 1.0), 0.0)

    hi = tl.full((BLOCK,), float("-inf"), tl.float32)
    for c in range(0, vocab, BLOCK):
        j = c + tl.arange(0, BLOCK)
        hi = tl.maximum(hi, tl.load(z_row + j, mask=j < vocab, other=0.0).to(tl.float32))
    top = tl.max(hi, axis=0)

    acc = tl.zeros((BLOCK,), tl.float32)
    for c in range(0, vocab, BLOCK):
        j = c + tl.arange(0, BLOCK)
        z = tl.load(z_row + j, mask=j < vocab, other=float("-inf")).to(tl.float32)
        acc += tl.exp(z - top)
    lse = top + tl.log(tl.sum(acc, axis=0))

    picked = tl.load(z_row + y, mask=keep, other=0.0).to(tl.float32)
    tl.store(part_ptr + i, tl.where(keep, (lse - picked) * inv, 0.0))

    for c in range(0, vocab, BLOCK):
        j = c + tl.arange(0, BLOCK)
        z = tl.load(z_row + j, mask=j < vocab, other=float("-inf")).to(tl.float32)
        g = tl.exp(z - lse) - tl.where(j == y, 1.0, 0.0)
        tl.store(dz_row + j, (g * inv).to(dz_ptr.dtype.element_ty), mask=j < vocab)


def cross_entropy(logits, target, ignore_index=-100):
    z = logits if logits.stride(-1) == 1 else logits.contiguous()
    t, v = z.shape
    dz = torch.empty((t, v), dtype=z.dtype, device=z.device)
    part = torch.empty(t, dtype=torch.float32, device=z.device)
    valid = (target != ignore_index).sum()
    _xent_rows[(t,)](
        z, target, dz, part, valid, z.stride(0), dz.stride(0), v, ignore_index, BLOCK=1024
    )
    return part.sum(), dz
