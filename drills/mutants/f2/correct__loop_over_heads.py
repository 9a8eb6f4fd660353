"""F2 correct variant: one program per token, a loop over its heads; the page found once."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _append_token_kernel(
    k_ptr,
    v_ptr,
    k_cache_ptr,
    v_cache_ptr,
    page_table_ptr,
    positions_ptr,
    k_strides_token,
    k_strides_head,
    v_strides_token,
    v_strides_head,
    page_stride,
    slot_stride,
    head_stride,
    table_stride,
    n_heads,
    head_dim,
    page_size,
    BLOCK_D: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64)
    d = tl.arange(0, BLOCK_D)
    in_head = d < head_dim
    pos = tl.load(positions_ptr + b).to(tl.int64)
    page = tl.load(page_table_ptr + b * table_stride + pos // page_size).to(tl.int64)
    base = page * page_stride + (pos % page_size) * slot_stride
    for h in range(n_heads):
        k_row = tl.load(k_ptr + b * k_strides_token + h * k_strides_head + d, mask=in_head)
        v_row = tl.load(v_ptr + b * v_strides_token + h * v_strides_head + d, mask=in_head)
        tl.store(k_cache_ptr + base + h * head_stride + d, k_row, mask=in_head)
        tl.store(v_cache_ptr + base + h * head_stride + d, v_row, mask=in_head)


def append_paged_kv_cache(k, v, k_cache, v_cache, page_table, positions):
    batch, n_heads, head_dim = k.shape
    page_stride, slot_stride, head_stride, _ = k_cache.stride()
    _append_token_kernel[(batch,)](
        k, v, k_cache, v_cache, page_table, positions,
        k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        page_stride, slot_stride, head_stride, page_table.stride(0),
        n_heads, head_dim, k_cache.shape[1],
        BLOCK_D=triton.next_power_of_2(head_dim),
        num_warps=1,
    )  # fmt: skip
