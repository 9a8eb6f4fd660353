"""F2 correct variant, vLLM's way (reshape_and_cache): the host turns (page_table, positions)
into one flat slot number per token, slot_mapping = page * page_size + slot, and the kernel
splits it back into page and slot. The lookup runs in torch, the copy in Triton."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _reshape_and_cache(
    key_ptr,
    value_ptr,
    key_cache_ptr,
    value_cache_ptr,
    slot_mapping_ptr,
    key_stride,
    value_stride,
    key_head_stride,
    value_head_stride,
    block_stride,
    slot_stride,
    head_stride,
    num_heads,
    head_size,
    block_size,
    HEADS: tl.constexpr,
    LANES: tl.constexpr,
):
    token = tl.program_id(0).to(tl.int64)
    slot_id = tl.load(slot_mapping_ptr + token)
    block, offset = slot_id // block_size, slot_id % block_size
    h = tl.arange(0, HEADS)[:, None]
    x = tl.arange(0, LANES)[None, :]
    keep = (h < num_heads) & (x < head_size)
    key = tl.load(key_ptr + token * key_stride + h * key_head_stride + x, mask=keep)
    value = tl.load(value_ptr + token * value_stride + h * value_head_stride + x, mask=keep)
    target = block * block_stride + offset * slot_stride + h * head_stride + x
    tl.store(key_cache_ptr + target, key, mask=keep)
    tl.store(value_cache_ptr + target, value, mask=keep)


def append_paged_kv_cache(k, v, k_cache, v_cache, page_table, positions):
    num_tokens, num_heads, head_size = k.shape
    block_size = k_cache.shape[1]
    rows = torch.arange(num_tokens, device=positions.device)
    blocks = page_table[rows, positions // block_size].long()
    slot_mapping = blocks * block_size + positions % block_size
    _reshape_and_cache[(num_tokens,)](
        k, v, k_cache, v_cache, slot_mapping,
        k.stride(0), v.stride(0), k.stride(1), v.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        num_heads, head_size, block_size,
        HEADS=triton.next_power_of_2(num_heads),
        LANES=triton.next_power_of_2(head_size),
        num_warps=4,
    )  # fmt: skip
