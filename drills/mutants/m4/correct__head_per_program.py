"""m4, written another way: one program per (split, query head, sequence), scores without
tl.dot, natural exponentials, and each sequence cut into NUM_SPLITS splits of whole pages.

Each program loads its query head's row of q, walks its split BLOCK_N keys at a time (each
key's page from the table) and scores them with an elementwise product summed over D. Its
partial output comes with a natural-log lse; a split with no keys stores lse = -inf and a zero
output. The merge walks the NUM_SPLITS partials of a head with a running max, as the key loop
walks keys, so an empty split (weight e^-inf = 0) drops out by itself.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

NUM_SPLITS = 4


@triton.jit
def _partial_kernel(
    q_ptr,
    k_cache_ptr,
    v_cache_ptr,
    page_table_ptr,
    seq_lens_ptr,
    o_part_ptr,
    lse_part_ptr,
    q_batch_stride,
    q_head_stride,
    k_page_stride,
    k_slot_stride,
    k_head_stride,
    v_page_stride,
    v_slot_stride,
    v_head_stride,
    table_row_stride,
    n_heads,
    group,
    page_size,
    sm_scale,
    NUM_SPLITS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    split = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    kv_head = head // group
    seq_len = tl.load(seq_lens_ptr + batch)
    pages_per_split = tl.cdiv(tl.cdiv(seq_len, page_size), NUM_SPLITS)
    lo = split * pages_per_split * page_size
    hi = tl.minimum(lo + pages_per_split * page_size, seq_len)

    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + batch * q_batch_stride + head * q_head_stride + offs_d).to(tl.float32)
    m_i = tl.full([], float("-inf"), tl.float32)
    l_i = tl.full([], 0.0, tl.float32)
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for first in range(lo, hi, BLOCK_N):
        tokens = first + tl.arange(0, BLOCK_N)
        inside = tokens < hi
        page = tl.load(page_table_ptr + batch * table_row_stride + tokens // page_size, mask=inside)
        page = page.to(tl.int64)
        slot = tokens % page_size
        k_rows = k_cache_ptr + page * k_page_stride + slot * k_slot_stride + kv_head * k_head_stride
        v_rows = v_cache_ptr + page * v_page_stride + slot * v_slot_stride + kv_head * v_head_stride
        k = tl.load(k_rows[:, None] + offs_d[None, :], mask=inside[:, None], other=0.0)
        scores = tl.sum(k.to(tl.float32) * q[None, :], axis=1) * sm_scale
        scores = tl.where(inside, scores, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(scores, axis=0))
        shrink = tl.exp(m_i - m_new)
        p = tl.exp(scores - m_new)
        v = tl.load(v_rows[:, None] + offs_d[None, :], mask=inside[:, None], other=0.0)
        l_i = l_i * shrink + tl.sum(p, axis=0)
        acc = acc * shrink + tl.sum(p[:, None] * v.to(tl.float32), axis=0)
        m_i = m_new

    slot_of_split = (batch * n_heads + head) * NUM_SPLITS + split
    has_keys = l_i > 0
    partial = tl.where(has_keys, acc / tl.where(has_keys, l_i, 1.0), 0.0)
    tl.store(o_part_ptr + slot_of_split * HEAD_DIM + offs_d, partial)
    tl.store(lse_part_ptr + slot_of_split, m_i + tl.log(l_i))  # -inf + log(0): -inf, no keys


@triton.jit
def _merge_kernel(
    o_part_ptr,
    lse_part_ptr,
    out_ptr,
    n_heads,
    NUM_SPLITS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    head = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    first = (batch * n_heads + head) * NUM_SPLITS
    offs_d = tl.arange(0, HEAD_DIM)
    # Split 0 always has keys (seq_len >= 1): start from it, then fold in the others.
    m = tl.load(lse_part_ptr + first)
    total = tl.full([], 1.0, tl.float32)
    acc = tl.load(o_part_ptr + first * HEAD_DIM + offs_d)
    for split in range(1, NUM_SPLITS):
        lse = tl.load(lse_part_ptr + first + split)
        m_new = tl.maximum(m, lse)
        shrink = tl.exp(m - m_new)
        weight = tl.exp(lse - m_new)  # 0 for an empty split (lse = -inf)
        partial = tl.load(o_part_ptr + (first + split) * HEAD_DIM + offs_d)
        total = total * shrink + weight
        acc = acc * shrink + weight * partial
        m = m_new
    out = acc / total
    tl.store(
        out_ptr + (batch * n_heads + head) * HEAD_DIM + offs_d, out.to(out_ptr.dtype.element_ty)
    )


def paged_decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    """softmax(q . k^T * sm_scale) v over each sequence's seq_lens[b] paged keys; query head h
    reads KV head h // (H_q // H_kv). q [B, H_q, D]; caches [num_pages, page_size, H_kv, D]."""
    batch, n_heads, head_dim = q.shape
    _, page_size, n_kv_heads, _ = k_cache.shape
    if q.stride(2) != 1:
        q = q.contiguous()
    o_part = torch.empty(batch, n_heads, NUM_SPLITS, head_dim, device=q.device)
    lse_part = torch.empty(batch, n_heads, NUM_SPLITS, device=q.device)
    out = torch.empty(batch, n_heads, head_dim, dtype=q.dtype, device=q.device)
    _partial_kernel[(NUM_SPLITS, n_heads, batch)](
        q,
        k_cache,
        v_cache,
        page_table,
        seq_lens,
        o_part,
        lse_part,
        q.stride(0),
        q.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        v_cache.stride(0),
        v_cache.stride(1),
        v_cache.stride(2),
        page_table.stride(0),
        n_heads,
        n_heads // n_kv_heads,
        page_size,
        sm_scale,
        NUM_SPLITS=NUM_SPLITS,
        HEAD_DIM=head_dim,
        BLOCK_N=32,
    )
    _merge_kernel[(n_heads, batch)](
        o_part, lse_part, out, n_heads, NUM_SPLITS=NUM_SPLITS, HEAD_DIM=head_dim
    )
    return out
