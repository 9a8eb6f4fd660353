"""Mutant of b1: blocks of 256 in a loop; y and dy loaded with other=1.0 (a "neutral" value
for a product), so each padded lane adds 1 * 1 to the row sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def _bwd(Y, DY, DX, sy, sdy, sdx, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + lanes
        inside = cols < n
        y = tl.load(Y + row * sy + cols, mask=inside, other=1.0).to(tl.float32)
        g = tl.load(DY + row * sdy + cols, mask=inside, other=1.0).to(tl.float32)
        acc += y * g
    dot = tl.sum(acc, axis=0)
    for start in range(0, n, BLOCK):
        cols = start + lanes
        inside = cols < n
        y = tl.load(Y + row * sy + cols, mask=inside, other=1.0).to(tl.float32)
        g = tl.load(DY + row * sdy + cols, mask=inside, other=1.0).to(tl.float32)
        tl.store(DX + row * sdx + cols, (y * (g - dot)).to(DX.dtype.element_ty), mask=inside)


def softmax_backward(y, dy):
    n = y.shape[-1]
    y2 = (y if y.stride(-1) == 1 else y.contiguous()).reshape(-1, n)
    g2 = (dy if dy.stride(-1) == 1 else dy.contiguous()).reshape(-1, n)
    out = torch.empty(g2.shape, dtype=dy.dtype, device=dy.device)
    _bwd[(g2.shape[0],)](y2, g2, out, y2.stride(0), g2.stride(0), out.stride(0), n, BLOCK=256)
    return out.view(dy.shape)
