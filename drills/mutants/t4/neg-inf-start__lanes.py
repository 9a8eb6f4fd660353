"""Mutant of t4: per-lane running max starting at -inf, no guard: a lane still at -inf meets
exp(-inf - -inf) = NaN (blocks of 256)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(X, Y, sx, sy, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    lane_max = tl.full((BLOCK,), float("-inf"), tl.float32)
    lane_sum = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + lanes
        v = tl.load(X + row * sx + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(lane_max, v)
        lane_sum = lane_sum * tl.exp(lane_max - new_max) + tl.exp(v - new_max)
        lane_max = new_max
    m = tl.max(lane_max, axis=0)
    s = tl.sum(lane_sum * tl.exp(lane_max - m), axis=0)
    for start in range(0, n, BLOCK):
        cols = start + lanes
        v = tl.load(X + row * sx + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
        tl.store(Y + row * sy + cols, (tl.exp(v - m) / s).to(Y.dtype.element_ty), mask=cols < n)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    x2 = (x if x.stride(-1) == 1 else x.contiguous()).reshape(-1, n)
    y2 = torch.empty_like(x2)
    _kernel[(x2.shape[0],)](x2, y2, x2.stride(0), y2.stride(0), n, BLOCK=256, num_warps=4)
    return y2.view(x.shape)
