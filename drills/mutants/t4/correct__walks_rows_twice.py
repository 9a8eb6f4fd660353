"""A correct t4 that always walks the row twice, front to back: statistics first, then the
output, re-reading every block (2048 columns at a time), even when the row is that short.

Once the perf coach's `second-read` example: on an H200 (2026-12-02) it took 1.31x the
reference's time at 4096 x 8192. On an H100 (2026-12-05) the second walk found the row still in
the L2: 1.15x in one run, at the reference in another. A cost that comes and goes with the
cache is no mistake to name, so it is kept as a correct variant, and the coach's examples are
kernels whose second read must come from DRAM.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(src, dst, src_stride, dst_stride, ncols, CHUNK: tl.constexpr):
    r = tl.program_id(axis=0).to(tl.int64)
    src_row = src + r * src_stride
    dst_row = dst + r * dst_stride
    idx = tl.arange(0, CHUNK)
    running_max = float("-inf")
    running_sum = 0.0
    for c0 in tl.range(0, ncols, CHUNK):
        keep = c0 + idx < ncols
        chunk = tl.load(src_row + c0 + idx, mask=keep, other=float("-inf")).to(tl.float32)
        block_max = tl.max(chunk, axis=0)
        new_max = tl.maximum(running_max, block_max)
        shift = tl.where(new_max == float("-inf"), 0.0, new_max)
        running_sum = running_sum * tl.exp(running_max - shift) + tl.sum(tl.exp(chunk - shift))
        running_max = new_max
    inv = 1.0 / running_sum
    for c0 in tl.range(0, ncols, CHUNK):
        keep = c0 + idx < ncols
        chunk = tl.load(src_row + c0 + idx, mask=keep, other=float("-inf")).to(tl.float32)
        out = tl.exp(chunk - running_max) * inv
        tl.store(dst_row + c0 + idx, out.to(dst.dtype.element_ty), mask=keep)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    shape = x.shape
    if x.stride(-1) != 1:
        x = x.contiguous()
    rows = x.reshape(-1, shape[-1])
    out = torch.empty(rows.shape, dtype=x.dtype, device=x.device)
    softmax_rows[(rows.shape[0],)](
        rows, out, rows.stride(0), out.stride(0), shape[-1], CHUNK=2048, num_warps=8
    )
    return out.reshape(shape)
