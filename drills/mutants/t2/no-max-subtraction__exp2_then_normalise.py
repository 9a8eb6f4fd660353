"""Mutant of t2: exp2(x * log2 e) of the raw row, normalised by multiplying with 1 / sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_fwd(src_ptr, dst_ptr, src_stride, dst_stride, width, TILE: tl.constexpr):
    pid = tl.program_id(axis=0)
    idx = tl.arange(0, TILE)
    keep = idx < width
    logits = tl.load(src_ptr + pid * src_stride + idx, mask=keep, other=-float("inf"))
    w = tl.math.exp2(logits.to(tl.float32) * 1.4426950408889634)
    inv_total = 1.0 / tl.sum(w, axis=0)
    tl.store(dst_ptr + pid * dst_stride + idx, (w * inv_total).to(dst_ptr.dtype.element_ty),
             mask=keep)


def softmax(x):
    width = x.size(-1)
    rows = x.contiguous().view(-1, width)
    dst = torch.empty_like(rows)
    tile = triton.next_power_of_2(width)
    softmax_fwd[(rows.size(0),)](rows, dst, rows.stride(0), dst.stride(0), width, TILE=tile,
                                 num_warps=4 if tile <= 2048 else 8)
    return dst.view_as(x)
