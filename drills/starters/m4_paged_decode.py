"""Drill m4: decode attention over a paged KV cache, split across programs (flash-decoding).

    out[b, h] = softmax(q[b, h] . K^T * sm_scale) V

where K and V are the first seq_lens[b] keys and values of sequence b for KV head h // G.
One decode step: one query row per sequence and head, against a long history kept in pages.

The contract:
- q: [B, H_q, D], float16 or bfloat16 (float32 works too), D = 64 or 128.
- k_cache, v_cache: [num_pages, page_size, H_kv, D], q's dtype. They may be views of
  head-major memory ([num_pages, H_kv, page_size, D] transposed): use their strides.
- page_table: [B, max_pages] int32. Token t of sequence b sits in physical page
  page_table[b, t // page_size], slot t % page_size. Logical page p + 1 is anywhere in the
  cache, not at physical page + 1: look every page up.
- seq_lens: [B] int32, each in [1, max_pages * page_size], ragged. The slots past seq_len (the
  tail of the last page, the spare pages a table row may list) hold stale keys: mask them.
- grouped-query heads: H_q = G * H_kv; query head h reads KV head h // G.
- sm_scale: a float. out: [B, H_q, D] in q's dtype.

Flash-decoding: one query row is too little work for a program, and B * H_kv programs too few
for a GPU. Cut each sequence's keys into splits of split_len keys; program (split, kv_head, b)
attends its split's keys for the G query heads of kv_head (the rows of one tile, padded to 16
for tl.dot), with the online softmax of m3, and writes a partial output with its log-sum-exp.
A second kernel merges a head's partials as f7 merges two: weights e^(lse - max lse) (or 2^...
if your lse is base 2: one base from the scores to the merge), out = sum(w * o) / sum(w).

On the CPU (tutor check --cpu) the interpreter runs programs one after another: the tests use
histories of 3 to 150 tokens in pages of 8 and 16. Pick split_len as a small multiple of BLOCK_N
there too, so that a sequence has several splits, as it would on a GPU.

The lesson is drills/content/m4.md. Check your work with `tutor check m4`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # log2(e): e^x = 2^(x * log2(e))


@triton.jit
def _split_kernel(
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
    o_part_batch_stride,
    o_part_head_stride,
    o_part_split_stride,
    lse_part_batch_stride,
    lse_part_head_stride,
    page_size,
    split_len,
    qk_scale,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """The partial result of split pid0 of sequence pid2, for the GROUP query heads of KV head
    pid1. qk_scale is sm_scale * log2(e): scores in log2 units, exponentials with tl.exp2."""
    # TODO: split, kv_head, batch from the program ids (batch as tl.int64); seq_len from
    #       seq_lens; start = split * split_len. A split that starts at or past seq_len has no
    #       keys: return. end = the split's end, but never past seq_len.
    # TODO: heads = kv_head * GROUP + tl.arange(0, BLOCK_H), masked to the first GROUP rows;
    #       load the [BLOCK_H, HEAD_DIM] q tile (padded rows as 0).
    # TODO: m_i (-inf), l_i (0), acc ([BLOCK_H, HEAD_DIM], 0), all tl.float32.
    # TODO: loop block_start from start to end by BLOCK_N:
    #       - offs_n: the block's tokens; key_mask = offs_n < end;
    #       - pages = page_table[batch, offs_n // page_size] (masked, as int64),
    #         slots = offs_n % page_size;
    #       - k as a [HEAD_DIM, BLOCK_N] tile, v as [BLOCK_N, HEAD_DIM], gathered through
    #         pages and slots with the caches' strides, masked with key_mask;
    #       - qk = tl.dot(q, k) * qk_scale, keys outside key_mask -> float("-inf");
    #       - the online softmax of m3: m_new, alpha = tl.exp2(m_i - m_new), p, l_i, acc
    #         (acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])), m_i = m_new.
    # TODO: store acc / l_i (fp32) and lse = m_i + tl.log2(l_i) (base 2) at [batch, heads,
    #       split] of o_part and lse_part, for the GROUP real rows only.
    pass


@triton.jit
def _merge_kernel(
    o_part_ptr,
    lse_part_ptr,
    seq_lens_ptr,
    out_ptr,
    o_part_batch_stride,
    o_part_head_stride,
    o_part_split_stride,
    lse_part_batch_stride,
    lse_part_head_stride,
    out_batch_stride,
    out_head_stride,
    split_len,
    HEAD_DIM: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    """out[pid1, pid0]: the partials of head pid0 of sequence pid1 merged by their lse."""
    # TODO: head, batch; the splits that have keys: split < tl.cdiv(seq_len, split_len).
    # TODO: load their lse (the others as -inf) and their [BLOCK_S, HEAD_DIM] partials (the
    #       others as 0); weights = 2^(lse - max lse); out = sum(w * o) / sum(w); store it in
    #       out's dtype.
    pass


def paged_decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    """Decode attention of one query row per sequence and head over a paged KV cache.

    q: [B, H_q, D]; k_cache, v_cache: [num_pages, page_size, H_kv, D] (any strides with the
    last dimension contiguous); page_table: [B, max_pages] int32; seq_lens: [B] int32;
    H_q = G * H_kv. Returns out [B, H_q, D] in q's dtype:

        out[b, h] = softmax(q[b, h] . k[t]^T * sm_scale) v[t] over t < seq_lens[b],
        k[t] = k_cache[page_table[b, t // page_size], t % page_size, h // G]   (v alike)
    """
    # TODO: check the shapes and dtypes; batch, n_heads, head_dim, page_size, n_kv_heads;
    #       group = n_heads // n_kv_heads.
    # TODO: split_len: a multiple of BLOCK_N such that batch * n_kv_heads * num_splits programs
    #       fill the GPU (the SM count from torch.cuda.get_device_properties on a GPU), with
    #       max_len = page_table.shape[1] * page_size (reading seq_lens on the host would wait
    #       for the GPU); num_splits = triton.cdiv(max_len, split_len).
    # TODO: o_part [B, H_q, num_splits, D] and lse_part [B, H_q, num_splits] in float32, out
    #       [B, H_q, D] in q's dtype (torch.empty: a split with no keys leaves its slot unset).
    # TODO: launch _split_kernel on grid (num_splits, n_kv_heads, batch) with the strides,
    #       page_size, split_len, sm_scale * LOG2E, GROUP=, HEAD_DIM=, BLOCK_H=max(16,
    #       triton.next_power_of_2(group)), BLOCK_N=, num_warps=; then _merge_kernel on grid
    #       (n_heads, batch) with BLOCK_S=triton.next_power_of_2(num_splits).
    raise NotImplementedError("TODO: write paged_decode_attention and its two kernels")
