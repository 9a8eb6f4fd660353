"""Mutant of t5: the row stride is passed, but the column stride is taken to be 1, so a
transposed view (column stride M) or a column-sliced one is read wrongly."""

import torch
import triton
import triton.language as tl


@triton.jit
def _tile_t(src, dst, rows, cols, src_stride, dst_stride, TM: tl.constexpr, TN: tl.constexpr):
    r = tl.program_id(0) * TM + tl.arange(0, TM)
    c = tl.program_id(1) * TN + tl.arange(0, TN)
    inside = (r[:, None] < rows) & (c[None, :] < cols)
    block = tl.load(src + r[:, None] * src_stride + c[None, :], mask=inside, other=0.0)
    # Store the block as it is, through pointers laid out [TM, TN] into y's [N, M] memory.
    tl.store(dst + c[None, :] * dst_stride + r[:, None], block, mask=inside)


def transpose(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    y = x.new_empty((cols, rows))
    tm, tn = 32, 128
    _tile_t[(triton.cdiv(rows, tm), triton.cdiv(cols, tn))](
        x, y, rows, cols, x.stride(0), y.stride(0), TM=tm, TN=tn, num_warps=8)
    return y
