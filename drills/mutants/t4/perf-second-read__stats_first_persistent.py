"""A correct t4 written as a persistent kernel: a few programs per SM, each taking every
P-th row. It first finds the max and the sum of every one of its rows (kept in a small
scratch tensor), then walks its rows again to write them: by then the whole input has gone
through the cache since it read a row, so the second read comes from DRAM.
bench-case: 1,0
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _stats_then_rows(x_ptr, y_ptr, stats_ptr, n_rows, n_cols, sx, sy, BLOCK: tl.constexpr):
    first, step = tl.program_id(0), tl.num_programs(0)
    offs = tl.arange(0, BLOCK)
    for row in range(first, n_rows, step):
        src = x_ptr + row.to(tl.int64) * sx
        hi = tl.full((BLOCK,), float("-inf"), tl.float32)
        tot = tl.zeros((BLOCK,), tl.float32)
        for start in range(0, n_cols, BLOCK):
            v = tl.load(src + start + offs, mask=start + offs < n_cols, other=float("-inf"))
            v = v.to(tl.float32)
            new_hi = tl.maximum(hi, v)
            safe = tl.where(new_hi == float("-inf"), 0.0, new_hi)
            tot = tot * tl.exp(hi - safe) + tl.exp(v - safe)
            hi = new_hi
        row_max = tl.max(hi, axis=0)
        row_sum = tl.sum(tot * tl.exp(hi - row_max), axis=0)
        tl.store(stats_ptr + 2 * row, row_max)
        tl.store(stats_ptr + 2 * row + 1, row_sum)
    # A row's max and sum were stored by one thread and are read back by all: the barrier
    # makes those stores visible to the whole program first (without it, an H100 now and then
    # read a stale max: the lab's probe_store_then_load).
    tl.debug_barrier()
    for row in range(first, n_rows, step):
        src = x_ptr + row.to(tl.int64) * sx
        dst = y_ptr + row.to(tl.int64) * sy
        row_max = tl.load(stats_ptr + 2 * row)
        inv_sum = 1.0 / tl.load(stats_ptr + 2 * row + 1)
        for start in range(0, n_cols, BLOCK):
            keep = start + offs < n_cols
            v = tl.load(src + start + offs, mask=keep, other=0.0).to(tl.float32)
            out = tl.exp(v - row_max) * inv_sum
            tl.store(dst + start + offs, out.to(y_ptr.dtype.element_ty), mask=keep)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    shape = x.shape
    rows = x.reshape(-1, shape[-1])
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    n_rows, n_cols = rows.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    stats = torch.empty((n_rows, 2), dtype=torch.float32, device=x.device)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
    grid = (max(1, min(n_rows, 4 * sms)),)
    _stats_then_rows[grid](
        rows, y, stats, n_rows, n_cols, rows.stride(0), y.stride(0), BLOCK=2048, num_warps=8
    )
    return y.reshape(shape)
