"""m4, written another way: the keys walked one page per step, splits of PAGES_PER_SPLIT pages,
and the partials merged in natural-log units over a grid of splits that may be empty.

Program (split, kv_head, sequence) holds the G query heads of its KV head as the rows of a
tl.dot, as the solution does, but its loop reads the table once per page (a scalar load) and
takes that page's slots as one tile of PAGE_TILE rows (the page size rounded up to a power of
two, and to 16 for tl.dot). The scores are in log2 units and every exponential an exp2; the lse
it stores is converted back to a natural log (times ln 2), and the merge takes tl.exp of it. A
split past the sequence's end stores lse = -inf, so its weight in the merge is exactly 0.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
PAGES_PER_SPLIT = 2


@triton.jit
def _pages_kernel(
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
    num_splits,
    page_size,
    qk_scale,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_H: tl.constexpr,
    PAGE_TILE: tl.constexpr,
    PAGES_PER_SPLIT: tl.constexpr,
):
    split = tl.program_id(0)
    kv_head = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    seq_len = tl.load(seq_lens_ptr + batch)
    first_page = split * PAGES_PER_SPLIT
    last_page = tl.minimum(first_page + PAGES_PER_SPLIT, tl.cdiv(seq_len, page_size))

    g = tl.arange(0, BLOCK_H)
    heads = kv_head * GROUP + g
    d = tl.arange(0, HEAD_DIM)
    slots = tl.arange(0, PAGE_TILE)
    q = tl.load(
        q_ptr + batch * q_batch_stride + heads[:, None] * q_head_stride + d[None, :],
        mask=(g < GROUP)[:, None],
        other=0.0,
    )
    m = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_H], tl.float32)  # noqa: E741
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for page in range(first_page, last_page):
        physical = tl.load(page_table_ptr + batch * table_row_stride + page).to(tl.int64)
        real = (slots < page_size) & (page * page_size + slots < seq_len)
        k_tile = k_cache_ptr + physical * k_page_stride + kv_head * k_head_stride
        v_tile = v_cache_ptr + physical * v_page_stride + kv_head * v_head_stride
        kt = tl.load(
            k_tile + slots[None, :] * k_slot_stride + d[:, None], mask=real[None, :], other=0.0
        )
        v = tl.load(
            v_tile + slots[:, None] * v_slot_stride + d[None, :], mask=real[:, None], other=0.0
        )
        s = tl.where(real[None, :], tl.dot(q, kt) * qk_scale, float("-inf"))
        m_next = tl.maximum(m, tl.max(s, axis=1))
        rescale = tl.exp2(m - m_next)
        p = tl.exp2(s - m_next[:, None])
        l = l * rescale + tl.sum(p, axis=1)  # noqa: E741
        acc = tl.dot(p.to(v.dtype), v, acc * rescale[:, None])
        m = m_next

    row = (batch * n_heads + heads) * num_splits + split
    partial = acc / tl.where(l > 0, l, 1.0)[:, None]
    tl.store(o_part_ptr + row[:, None] * HEAD_DIM + d[None, :], partial, mask=(g < GROUP)[:, None])
    lse = (m + tl.log2(l)) * 0.6931471805599453  # base 2 -> natural; -inf for no keys
    tl.store(lse_part_ptr + row, lse, mask=g < GROUP)


@triton.jit
def _merge_kernel(
    o_part_ptr,
    lse_part_ptr,
    out_ptr,
    num_splits,
    HEAD_DIM: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)  # batch * n_heads + head
    s = tl.arange(0, BLOCK_S)
    d = tl.arange(0, HEAD_DIM)
    lse = tl.load(lse_part_ptr + row * num_splits + s, mask=s < num_splits, other=float("-inf"))
    w = tl.exp(lse - tl.max(lse, axis=0))
    o = tl.load(
        o_part_ptr + (row * num_splits + s)[:, None] * HEAD_DIM + d[None, :],
        mask=(s < num_splits)[:, None],
        other=0.0,
    )
    out = tl.sum(w[:, None] * o, axis=0) / tl.sum(w, axis=0)
    tl.store(out_ptr + row * HEAD_DIM + d, out.to(out_ptr.dtype.element_ty))


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
    group = n_heads // n_kv_heads
    num_splits = triton.cdiv(page_table.shape[1], PAGES_PER_SPLIT)
    if q.stride(2) != 1:
        q = q.contiguous()
    o_part = torch.empty(batch, n_heads, num_splits, head_dim, device=q.device)
    lse_part = torch.empty(batch, n_heads, num_splits, device=q.device)
    out = torch.empty(batch, n_heads, head_dim, dtype=q.dtype, device=q.device)
    grid = (num_splits, n_kv_heads, batch)
    _pages_kernel[grid](
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
        num_splits,
        page_size,
        sm_scale * LOG2E,
        GROUP=group,
        HEAD_DIM=head_dim,
        BLOCK_H=max(16, triton.next_power_of_2(group)),
        PAGE_TILE=max(16, triton.next_power_of_2(page_size)),
        PAGES_PER_SPLIT=PAGES_PER_SPLIT,
    )
    _merge_kernel[(batch * n_heads,)](
        o_part,
        lse_part,
        out,
        num_splits,
        HEAD_DIM=head_dim,
        BLOCK_S=triton.next_power_of_2(num_splits),
    )
    return out
