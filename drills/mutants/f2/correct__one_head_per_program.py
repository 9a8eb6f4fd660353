"""F2 correct variant: one program per (token, head), a 1-D block over the head's D values."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _append_head_kernel(
    k_ptr,
    v_ptr,
    k_cache_ptr,
    v_cache_ptr,
    page_table_ptr,
    positions_ptr,
    k_token_stride,
    k_head_stride,
    v_token_stride,
    v_head_stride,
    cache_page_stride,
    cache_slot_stride,
    cache_head_stride,
    table_row_stride,
    head_dim,
    page_size,
    BLOCK_D: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    head_idx = tl.program_id(1).to(tl.int64)
    lanes = tl.arange(0, BLOCK_D)
    mask = lanes < head_dim

    position = tl.load(positions_ptr + token_idx).to(tl.int64)
    row = page_table_ptr + token_idx * table_row_stride
    page = tl.load(row + position // page_size).to(tl.int64)
    slot = position % page_size

    k = tl.load(k_ptr + token_idx * k_token_stride + head_idx * k_head_stride + lanes, mask=mask)
    v = tl.load(v_ptr + token_idx * v_token_stride + head_idx * v_head_stride + lanes, mask=mask)
    dest = page * cache_page_stride + slot * cache_slot_stride + head_idx * cache_head_stride
    tl.store(k_cache_ptr + dest + lanes, k, mask=mask)
    tl.store(v_cache_ptr + dest + lanes, v, mask=mask)


def append_paged_kv_cache(
    k: torch.Tensor,
    v: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    positions: torch.Tensor,
) -> None:
    n_tokens, n_heads, head_dim = k.shape
    assert k_cache.stride() == v_cache.stride() and k_cache.stride(3) == 1
    _append_head_kernel[(n_tokens, n_heads)](
        k,
        v,
        k_cache,
        v_cache,
        page_table,
        positions,
        k.stride(0),
        k.stride(1),
        v.stride(0),
        v.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        page_table.stride(0),
        head_dim,
        k_cache.shape[1],
        BLOCK_D=triton.next_power_of_2(head_dim),
        num_warps=1,
    )
