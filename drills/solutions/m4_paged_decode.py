"""Reference solution for drill m4: decode attention over a paged KV cache (flash-decoding).

    out[b, h] = softmax(q[b, h] . K^T * sm_scale) V       K, V: the first seq_lens[b] keys and
                                                         values of sequence b, KV head h // G

Sequence b's token t sits in physical page page_table[b, t // page_size], slot t % page_size,
of k_cache and v_cache ([num_pages, page_size, H_kv, D]). Consecutive logical pages are
anywhere in the cache: every key's page comes from the table.

Two kernels, as FlashInfer's BatchDecodeWithPagedKVCache and vLLM's paged attention v2 run:

1. `_split_kernel`, grid (num_splits, H_kv, B). One query row per head is too little work for a
   GPU, so each sequence's keys are cut into splits of `split_len`, and program (split,
   kv_head, batch) attends its split's keys for the G query heads that read kv_head, all at
   once: they are the rows of one [BLOCK_H, D] tile (BLOCK_H >= 16 for tl.dot), so each key
   is loaded once for the G heads. It walks its split BLOCK_N keys at a time with the online
   softmax of m3 (scores in log2 units, every exponential an exp2) and writes a partial output
   acc / l with its log-sum-exp lse = m + log2(l), in base 2, in fp32. A split that starts
   past its sequence's end has no keys and writes nothing.
2. `_merge_kernel`, grid (H_q, B): the splits that have keys, cdiv(seq_len, split_len) of them,
   merged as f7 merges two: weights 2^(lse - max lse), out = sum(w * partial) / sum(w). The
   weights are exp2 because the lse are base 2: both sides of the merge in one base.

The split length is chosen on the host so that B * H_kv * num_splits programs fill every SM
several times over (see _split_len): at batch 64 with 8 KV heads a few splits per sequence, at
batch 4 the most. On the CPU the interpreter splits as an H100 would (CPU_SMS).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # log2(e): e^x = 2^(x * log2(e))
PROGRAMS_PER_SM = 16  # split programs wanted per SM: several waves, so none ends half empty
MAX_SPLITS = 64  # the merge holds every split's partial of a head in one [MAX_SPLITS, D] tile
CPU_SMS = 132  # an H100's SMs: the interpreter runs the grid the GPU would


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
    split = tl.program_id(0)
    kv_head = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)  # int64: offsets of large tensors pass 2**31
    seq_len = tl.load(seq_lens_ptr + batch)
    start = split * split_len
    if start >= seq_len:
        return  # past this sequence's end: no keys, nothing to write (the merge skips it)
    end = tl.minimum(start + split_len, seq_len)

    # The G query heads that read this KV head: rows of one tile, padded to BLOCK_H.
    rows = tl.arange(0, BLOCK_H)
    heads = kv_head * GROUP + rows
    head_mask = rows < GROUP
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_ptr + batch * q_batch_stride + heads[:, None] * q_head_stride + offs_d[None, :]
    q = tl.load(q_ptrs, mask=head_mask[:, None], other=0.0)

    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], dtype=tl.float32)
    table_row = page_table_ptr + batch * table_row_stride
    k_head = k_cache_ptr + kv_head * k_head_stride
    v_head = v_cache_ptr + kv_head * v_head_stride
    for block_start in range(start, end, BLOCK_N):
        offs_n = block_start + tl.arange(0, BLOCK_N)
        key_mask = offs_n < end  # the split's (and the sequence's) last keys, then padding
        # Every key's own page: logical page offs_n // page_size, wherever the table put it.
        pages = tl.load(table_row + offs_n // page_size, mask=key_mask, other=0).to(tl.int64)
        slots = offs_n % page_size
        # k^T as a [HEAD_DIM, BLOCK_N] tile, v as [BLOCK_N, HEAD_DIM]; padded keys load as 0
        k_ptrs = k_head + pages[None, :] * k_page_stride + slots[None, :] * k_slot_stride
        v_ptrs = v_head + pages[:, None] * v_page_stride + slots[:, None] * v_slot_stride
        k = tl.load(k_ptrs + offs_d[:, None], mask=key_mask[None, :], other=0.0)
        v = tl.load(v_ptrs + offs_d[None, :], mask=key_mask[:, None], other=0.0)

        qk = tl.dot(q, k) * qk_scale  # [BLOCK_H, BLOCK_N] scores in log2 units, fp32
        qk = tl.where(key_mask[None, :], qk, float("-inf"))  # keys past the end weigh 0
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))  # finite: the first block has a key
        alpha = tl.exp2(m_i - m_new)  # how much the old terms shrink under the new max
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)  # p @ v accumulated into acc in fp32
        m_i = m_new

    # This split's partial output and its log-sum-exp, in base 2 like the scores.
    o_ptrs = (
        o_part_ptr
        + batch * o_part_batch_stride
        + heads[:, None] * o_part_head_stride
        + split * o_part_split_stride
        + offs_d[None, :]
    )
    tl.store(o_ptrs, acc / l_i[:, None], mask=head_mask[:, None])
    lse_ptrs = lse_part_ptr + batch * lse_part_batch_stride + heads * lse_part_head_stride + split
    tl.store(lse_ptrs, m_i + tl.log2(l_i), mask=head_mask)


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
    head = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    seq_len = tl.load(seq_lens_ptr + batch)
    splits = tl.arange(0, BLOCK_S)
    split_mask = splits < tl.cdiv(seq_len, split_len)  # only the splits that have keys
    offs_d = tl.arange(0, HEAD_DIM)

    lse_ptrs = lse_part_ptr + batch * lse_part_batch_stride + head * lse_part_head_stride + splits
    lse = tl.load(lse_ptrs, mask=split_mask, other=float("-inf"))  # base 2
    # Each split's weight is its share of the softmax's sum, 2^lse, divided by the largest
    # (f7): in [0, 1], 1 for the heaviest split, 0 for the masked ones.
    weights = tl.exp2(lse - tl.max(lse, axis=0))
    o_ptrs = (
        o_part_ptr
        + batch * o_part_batch_stride
        + head * o_part_head_stride
        + splits[:, None] * o_part_split_stride
        + offs_d[None, :]
    )
    partial = tl.load(o_ptrs, mask=split_mask[:, None], other=0.0)
    out = tl.sum(weights[:, None] * partial, axis=0) / tl.sum(weights, axis=0)
    out_ptrs = out_ptr + batch * out_batch_stride + head * out_head_stride + offs_d
    tl.store(out_ptrs, out.to(out_ptr.dtype.element_ty))


class Config(NamedTuple):
    """How the split kernel tiles its keys."""

    block_n: int
    num_warps: int
    num_stages: int


def _config(itemsize: int) -> Config:
    """64 keys a step for 16-bit caches: a [128, 64] k tile and a [64, 128] v tile, 16 KiB
    each at D = 128, one step's loads in flight while the last one's multiply runs. fp32
    tiles take twice the bytes: half the keys.

    Chosen from the compile facts, not yet from GPU times: compiled offline for sm_90a
    (Triton 3.9, bf16, D = 128, G = 4), the split kernel holds 109 registers a thread and 39
    KiB of shared memory (4 programs an SM, by registers), and its k and v tiles load as
    asynchronous copies one block ahead. 8 warps take 72-80 registers; 128 keys a step 164
    at 4 warps.
    """
    if itemsize == 4:
        return Config(32, 4, 2)
    return Config(64, 4, 3)


@functools.cache
def _sm_count(device: torch.device) -> int:
    if device.type != "cuda":
        return CPU_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def _split_len(batch: int, n_kv_heads: int, max_len: int, n_sms: int, block_n: int) -> int:
    """Keys per split: enough splits that batch * n_kv_heads * splits programs give every SM
    PROGRAMS_PER_SM of them, at most MAX_SPLITS, each a whole number of key blocks.

    max_len is the page table's capacity (max_pages * page_size), not max(seq_lens): reading
    seq_lens on the host would wait for the GPU. A shorter sequence's last splits are empty.
    """
    wanted = triton.cdiv(PROGRAMS_PER_SM * n_sms, batch * n_kv_heads)
    splits = max(1, min(wanted, MAX_SPLITS))
    return triton.cdiv(triton.cdiv(max_len, splits), block_n) * block_n


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
    last dimension contiguous, e.g. a head-major cache seen as NHD), q's dtype (float16,
    bfloat16 or float32), D in {16, 32, 64, 128, 256}. page_table: [B, max_pages] int32, the
    physical page of each logical page; seq_lens: [B] int32, each in [1, max_pages *
    page_size]. H_q = G * H_kv: query head h reads KV head h // G. Returns out [B, H_q, D] in
    q's dtype:

        out[b, h] = softmax(q[b, h] . k[t]^T * sm_scale) v[t] over t < seq_lens[b],
        k[t] = k_cache[page_table[b, t // page_size], t % page_size, h // G]   (v alike)
    """
    if q.dim() != 3 or k_cache.dim() != 4 or v_cache.shape != k_cache.shape:
        raise ValueError(
            f"q must be [B, H_q, D] and k_cache, v_cache one [num_pages, page_size, H_kv, D] "
            f"shape, got {tuple(q.shape)}, {tuple(k_cache.shape)}, {tuple(v_cache.shape)}"
        )
    if not (q.dtype == k_cache.dtype == v_cache.dtype):
        raise TypeError(f"q, k_cache, v_cache must share a dtype, got {q.dtype}, {k_cache.dtype}")
    batch, n_heads, head_dim = q.shape
    _, page_size, n_kv_heads, kv_dim = k_cache.shape
    if kv_dim != head_dim or head_dim not in (16, 32, 64, 128, 256):
        raise ValueError(f"head dim must match and be 16 to 256, got {head_dim} and {kv_dim}")
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"H_q = {n_heads} is not a multiple of H_kv = {n_kv_heads}")
    if page_table.dim() != 2 or page_table.shape[0] != batch or seq_lens.shape != (batch,):
        raise ValueError(
            f"page_table must be [{batch}, max_pages] and seq_lens [{batch}], got "
            f"{tuple(page_table.shape)} and {tuple(seq_lens.shape)}"
        )
    q, k_cache, v_cache = (
        t if t.stride(-1) == 1 else t.contiguous() for t in (q, k_cache, v_cache)
    )
    if page_table.stride(1) != 1:
        page_table = page_table.contiguous()  # small: a row of page numbers per sequence
    group = n_heads // n_kv_heads
    block_n, num_warps, num_stages = _config(q.element_size())
    max_len = page_table.shape[1] * page_size
    split_len = _split_len(batch, n_kv_heads, max_len, _sm_count(q.device), block_n)
    num_splits = triton.cdiv(max_len, split_len)

    # Partial outputs and their base-2 LSEs; a split with no keys leaves its slot unwritten.
    o_part = torch.empty(
        (batch, n_heads, num_splits, head_dim), dtype=torch.float32, device=q.device
    )
    lse_part = torch.empty((batch, n_heads, num_splits), dtype=torch.float32, device=q.device)
    out = torch.empty((batch, n_heads, head_dim), dtype=q.dtype, device=q.device)

    _split_kernel[(num_splits, n_kv_heads, batch)](
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
        o_part.stride(0),
        o_part.stride(1),
        o_part.stride(2),
        lse_part.stride(0),
        lse_part.stride(1),
        page_size,
        split_len,
        sm_scale * LOG2E,
        GROUP=group,
        HEAD_DIM=head_dim,
        BLOCK_H=max(16, triton.next_power_of_2(group)),  # tl.dot needs 16 rows or more
        BLOCK_N=block_n,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    _merge_kernel[(n_heads, batch)](
        o_part,
        lse_part,
        seq_lens,
        out,
        o_part.stride(0),
        o_part.stride(1),
        o_part.stride(2),
        lse_part.stride(0),
        lse_part.stride(1),
        out.stride(0),
        out.stride(1),
        split_len,
        HEAD_DIM=head_dim,
        BLOCK_S=triton.next_power_of_2(num_splits),
        num_warps=4,
    )
    return out
