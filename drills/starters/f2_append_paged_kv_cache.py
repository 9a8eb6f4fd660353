"""Drill F2: append one decode step's keys and values to a paged KV cache, in place.

A paged cache keeps every sequence's keys in pages of page_size token slots. The pages of one
sequence sit anywhere in the cache, in any order: row b of page_table lists them, so logical
page j of sequence b is physical page page_table[b, j]. At each decode step every sequence of
the batch has one new token; token b goes to position positions[b] of its sequence (its length
before the append):

    page = page_table[b, positions[b] // page_size]
    slot = positions[b] % page_size
    k_cache[page, slot] = k[b]            v_cache[page, slot] = v[b]

Sequences are ragged: each has its own position, and positions cross page boundaries. Nothing
else in the caches may change. This is FlashInfer's append_paged_kv_cache (vLLM's
reshape_and_cache) for one token per sequence.

Replace every `# TODO` and delete the `raise NotImplementedError` line. Run the tests with
`tutor check f2`.
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
    """Grid (B, cdiv(H, BLOCK_H)): one program per token and block of BLOCK_H heads."""
    # TODO: token_idx from program_id(0) (int64); this program's heads from program_id(1);
    #       offsets over D (BLOCK_D lanes) and a 2-D mask: heads < n_heads and lanes < head_dim.
    # TODO: load the token's position (int64), then its page from ITS row of page_table and
    #       its slot inside that page.
    # TODO: load a [BLOCK_H, BLOCK_D] tile of k and one of v, at their token and head strides.
    # TODO: store both at page, slot and heads, at the cache's page, slot and head strides.
    pass


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

    - k, v: [B, H, D], bf16, fp16 or fp32: the new token of each of B sequences. They may be
      slices of a fused qkv projection: use their token and head strides (the last dimension
      is contiguous).
    - k_cache, v_cache: [num_pages, page_size, H, D] in k's dtype, with the same strides as
      each other, the last one 1. NHD memory is that shape, contiguous; HND is the same
      logical shape as a view of head-major memory, torch.empty(P, H, S, D).transpose(1, 2):
      a kernel that uses the cache's strides handles both.
    - page_table: [B, max_pages] int32, the physical page of each logical page of each
      sequence (possibly the first columns of a wider table: use its row stride).
    - positions: [B] int32 or int64, where each new token goes in its sequence.

    Nothing else in the caches changes: not the other sequences' slots, not the slot after
    the one written.
    """
    # TODO: check the shapes (and that both caches have the same strides, the last one 1).
    # TODO: BLOCK_D = next_power_of_2(D); BLOCK_H heads per program (about 1024 lanes in all);
    #       grid (B, cdiv(H, BLOCK_H)).
    # TODO: launch, passing k's and v's token and head strides, the cache's page, slot and
    #       head strides (k_cache.stride(0), (1), (2)), page_table.stride(0), page_size, and
    #       the constexprs and num_warps by keyword. Nothing is returned: the caches change.
    raise NotImplementedError("TODO: write append_paged_kv_cache")
