"""F2 reference: append one decode step's keys and values to a paged KV cache, in place.

The cache is cut into pages of page_size token slots; a sequence's tokens live in the pages its
row of page_table lists, in order, wherever those pages sit in memory. Token b of the batch is
the next token of sequence b: it goes to slot positions[b] % page_size of the physical page
page_table[b, positions[b] // page_size]. One program copies one token's heads, k and v alike.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _append_kv_kernel(
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
    n_heads,
    head_dim,
    page_size,
    BLOCK_H: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)  # token b: the new token of sequence b
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)  # this program's block of heads
    dims = tl.arange(0, BLOCK_D)
    mask = (heads < n_heads)[:, None] & (dims < head_dim)[None, :]

    # Where the token goes: its position picks a logical page of its own sequence's table, and
    # a slot inside that page. The table maps the logical page to a physical one.
    position = tl.load(positions_ptr + token_idx).to(tl.int64)
    logical_page = position // page_size
    slot = position % page_size
    page = tl.load(page_table_ptr + token_idx * table_row_stride + logical_page).to(tl.int64)

    # k and v may be slices of a fused qkv tensor: tokens and heads at their own strides.
    k_offsets = token_idx * k_token_stride + heads[:, None] * k_head_stride + dims[None, :]
    v_offsets = token_idx * v_token_stride + heads[:, None] * v_head_stride + dims[None, :]
    k = tl.load(k_ptr + k_offsets, mask=mask)
    v = tl.load(v_ptr + v_offsets, mask=mask)

    # Pages, slots and heads at the cache's strides: NHD (heads D apart, slots H*D apart) and
    # HND (heads page_size*D apart, slots D apart) are the same code.
    cache_offsets = (
        page * cache_page_stride
        + slot * cache_slot_stride
        + heads[:, None] * cache_head_stride
        + dims[None, :]
    )
    tl.store(k_cache_ptr + cache_offsets, k, mask=mask)
    tl.store(v_cache_ptr + cache_offsets, v, mask=mask)


def append_paged_kv_cache(
    k: torch.Tensor,
    v: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    positions: torch.Tensor,
) -> None:
    """Write token b's k[b] and v[b] ([H, D] each) into its sequence's page, in place:

        page = page_table[b, positions[b] // page_size]
        slot = positions[b] % page_size
        k_cache[page, slot] = k[b]         v_cache[page, slot] = v[b]

    k, v [B, H, D] (any token and head strides, the last dimension contiguous); k_cache, v_cache
    [num_pages, page_size, H, D] with the same strides as each other (NHD, or HND as a
    transposed view of [num_pages, H, page_size, D] memory); page_table [B, max_pages] int32;
    positions [B] int32 or int64. Nothing else in the caches changes.
    """
    if k.dim() != 3 or v.shape != k.shape:
        raise ValueError(
            f"k and v must both be [B, H, D], got {tuple(k.shape)} and {tuple(v.shape)}"
        )
    n_tokens, n_heads, head_dim = k.shape
    if k_cache.dim() != 4 or k_cache.shape[2:] != k.shape[1:] or v_cache.shape != k_cache.shape:
        raise ValueError(
            f"k_cache and v_cache must both be [num_pages, page_size, {n_heads}, {head_dim}], "
            f"got {tuple(k_cache.shape)} and {tuple(v_cache.shape)}"
        )
    if v_cache.stride() != k_cache.stride() or k_cache.stride(3) != 1:
        raise ValueError("k_cache and v_cache must have the same strides, the last one 1")
    if k_cache.dtype != k.dtype or v_cache.dtype != v.dtype:
        raise ValueError(f"the caches must be in k's dtype ({k.dtype}), got {k_cache.dtype}")
    if page_table.dim() != 2 or page_table.shape[0] != n_tokens:
        raise ValueError(
            f"page_table must be [{n_tokens}, max_pages], got {tuple(page_table.shape)}"
        )
    if positions.shape != (n_tokens,):
        raise ValueError(f"positions must be [{n_tokens}], got {tuple(positions.shape)}")
    # Read-only inputs may be copied when their last dimension is strided; the caches may not.
    k = k if k.stride(2) == 1 else k.contiguous()
    v = v if v.stride(2) == 1 else v.contiguous()
    page_table = page_table if page_table.stride(1) == 1 else page_table.contiguous()
    page_size = k_cache.shape[1]

    block_d = triton.next_power_of_2(head_dim)
    # All of a token's heads in one program when they fit 1024 lanes (H = 8, D = 128: k and v
    # are 2 KB each in bf16), so each of 2 warps' threads loads 16 values of k and 16 of v.
    block_h = min(triton.next_power_of_2(n_heads), max(1, 1024 // block_d))
    grid = (n_tokens, triton.cdiv(n_heads, block_h))
    _append_kv_kernel[grid](
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
        n_heads,
        head_dim,
        page_size,
        BLOCK_H=block_h,
        BLOCK_D=block_d,
        num_warps=2,
    )
