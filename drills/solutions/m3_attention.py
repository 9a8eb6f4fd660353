"""Reference solution for drill m3: flash-attention forward as a Triton kernel.

    out[b, h] = softmax(q[b, h] @ k[b, h]^T * sm_scale) @ v[b, h]      (causal: j > i masked)

One program per (query block, batch * head). It keeps its BLOCK_M rows of q on chip and walks
the keys in blocks of BLOCK_N with an online softmax: a running max m, a running sum l and an
fp32 accumulator acc, both rescaled by 2^(m_old - m_new) whenever the max grows. The S x S
score matrix never exists in memory. Scores are kept in log2 units (sm_scale * log2(e) folded
into one scale) so that every exponential is a cheap exp2.

Key blocks come in two kinds. "Full" blocks need no mask: every key is inside the sequence and
(causal) at or before every query row of the program. "Masked" blocks are the last, partial
block (keys past S -> -inf) and, when causal, the blocks on the diagonal (key j > query i ->
-inf). Causal programs never visit the blocks above the diagonal: half the work is skipped,
and they start in reverse order, the query blocks with the most keys first, so that the short
ones fill the last wave instead of the long ones running alone at the end. Without the causal
mask, when S is a multiple of BLOCK_N, there are no masked blocks: the masked loop is left out
of the compiled kernel (PARTIAL_TAIL) rather than entered with nothing to do, which cost 6% at
these tiles (see _config).

16-bit inputs laid out as a contiguous [B, H, S, D] tensor (the common case) take a fast path
(DESC): q, k and v are seen as [B * H * S, D] rows and their tiles are loaded through tensor
descriptors, which Hopper's TMA unit copies into shared memory while the warps compute. The
rows a block reads past S belong to the next head (or read as 0 past the tensor's end); they
are masked like padding. Every other input takes the pointer loads.

In the full blocks, the scale and the running max are applied to each score in one fused
multiply-add, s * qk_scale - m, as in Triton's fused-attention tutorial: the max of the raw
scores times qk_scale is the max of the scaled ones (qk_scale > 0). The masked blocks scale
first, so that -inf stays -inf. See _config for the measured times.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

SHORT_SEQ = 1024  # up to this many keys, 64 x 64 tiles (see _config)
LOG2E = 1.4426950408889634  # log2(e): e^x = 2^(x * log2(e))


@triton.jit
def _attn_fwd_inner(
    acc,
    l_i,
    m_i,
    q,
    k_base,
    v_base,
    k_seq_stride,
    v_seq_stride,
    k_desc,
    v_desc,
    kv_row0,
    offs_m,
    offs_d,
    seq_len,
    qk_scale,
    lo,
    hi,
    MASKED: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    DESC: tl.constexpr,
):
    """Fold key blocks [lo, hi) into (acc, l_i, m_i); MASKED blocks mask padding and j > i."""
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = offs_n < seq_len
        if DESC:  # [BLOCK_N, HEAD_DIM] tiles of the [B * H * S, HEAD_DIM] rows
            row = (kv_row0 + start_n).to(tl.int32)
            k = tl.trans(k_desc.load([row, 0]))
            v = v_desc.load([row, 0])
        else:
            # k^T as a [HEAD_DIM, BLOCK_N] tile, v as [BLOCK_N, HEAD_DIM]; padded keys load as 0
            k_ptrs = k_base + offs_n[None, :] * k_seq_stride + offs_d[:, None]
            v_ptrs = v_base + offs_n[:, None] * v_seq_stride + offs_d[None, :]
            if MASKED:
                k = tl.load(k_ptrs, mask=kv_mask[None, :], other=0.0)
                v = tl.load(v_ptrs, mask=kv_mask[:, None], other=0.0)
            else:
                k = tl.load(k_ptrs)
                v = tl.load(v_ptrs)

        qk = tl.dot(q, k)  # [BLOCK_M, BLOCK_N] raw scores, fp32
        if MASKED:
            visible = kv_mask[None, :]
            if CAUSAL:
                visible = visible & (offs_m[:, None] >= offs_n[None, :])
            qk = tl.where(visible, qk * qk_scale, float("-inf"))  # log2 units
            m_new = tl.maximum(m_i, tl.max(qk, axis=1))  # finite: key 0 of block 0 came first
            qk = qk - m_new[:, None]
        else:
            # Scale and subtract the max in one multiply-add per score (module docstring).
            m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        alpha = tl.exp2(m_i - m_new)  # how much the old terms shrink under the new max
        p = tl.exp2(qk)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)  # p @ v accumulated into acc in fp32
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attn_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    q_desc,
    k_desc,
    v_desc,
    q_batch_stride,
    q_head_stride,
    q_seq_stride,
    k_batch_stride,
    k_head_stride,
    k_seq_stride,
    v_batch_stride,
    v_head_stride,
    v_seq_stride,
    o_batch_stride,
    o_head_stride,
    o_seq_stride,
    n_heads,
    seq_len,
    qk_scale,
    CAUSAL: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    DESC: tl.constexpr,
    PARTIAL_TAIL: tl.constexpr,
):
    block = tl.program_id(0)
    if CAUSAL:  # the query blocks with the most keys first (see the module docstring)
        block = tl.num_programs(0) - 1 - block
    start_m = block * BLOCK_M
    batch_head = tl.program_id(1).to(tl.int64)  # int64: offsets of large tensors pass 2**31
    batch = batch_head // n_heads
    head = batch_head % n_heads
    q_base = q_ptr + batch * q_batch_stride + head * q_head_stride
    k_base = k_ptr + batch * k_batch_stride + head * k_head_stride
    v_base = v_ptr + batch * v_batch_stride + head * v_head_stride
    o_base = o_ptr + batch * o_batch_stride + head * o_head_stride

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q_mask = offs_m[:, None] < seq_len
    row0 = batch_head * seq_len  # this head's first row in the [B * H * S, HEAD_DIM] view
    if DESC:
        q = q_desc.load([(row0 + start_m).to(tl.int32), 0])
    else:
        q_ptrs = q_base + offs_m[:, None] * q_seq_stride + offs_d[None, :]
        q = tl.load(q_ptrs, mask=q_mask, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    if CAUSAL:
        full_end = start_m  # keys before this block's first row: visible to every row
        masked_end = tl.minimum(start_m + BLOCK_M, seq_len)  # the diagonal; nothing after
    else:
        full_end = (seq_len // BLOCK_N) * BLOCK_N  # every key of these blocks is inside S
        masked_end = seq_len  # the partial block, if any
    acc, l_i, m_i = _attn_fwd_inner(
        acc,
        l_i,
        m_i,
        q,
        k_base,
        v_base,
        k_seq_stride,
        v_seq_stride,
        k_desc,
        v_desc,
        row0,
        offs_m,
        offs_d,
        seq_len,
        qk_scale,
        0,
        full_end,
        MASKED=False,
        CAUSAL=CAUSAL,
        BLOCK_N=BLOCK_N,
        DESC=DESC,
    )
    if CAUSAL or PARTIAL_TAIL:  # else there are no masked blocks: not even compiled
        acc, l_i, m_i = _attn_fwd_inner(
            acc,
            l_i,
            m_i,
            q,
            k_base,
            v_base,
            k_seq_stride,
            v_seq_stride,
            k_desc,
            v_desc,
            row0,
            offs_m,
            offs_d,
            seq_len,
            qk_scale,
            full_end,
            masked_end,
            MASKED=True,
            CAUSAL=CAUSAL,
            BLOCK_N=BLOCK_N,
            DESC=DESC,
        )

    out = acc / l_i[:, None]
    o_ptrs = o_base + offs_m[:, None] * o_seq_stride + offs_d[None, :]
    tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=q_mask)  # padded rows not stored


class Config(NamedTuple):
    """How one launch tiles the work."""

    block_m: int
    block_n: int
    num_warps: int
    num_stages: int


def _config(
    head_dim: int,
    itemsize: int,
    seq_len: int,
    causal: bool,
    descriptors: bool,
) -> Config:
    """The tiles for an H100/H200-class GPU.

    16-bit inputs: 128 x 64 score tiles as in Triton's fused-attention tutorial, 8 warps for
    D = 128 (a 128 x 128 fp32 accumulator is 64 registers a thread), and 3 stages so the next
    k and v tiles load while these multiply (3 x 2 x 64 x 128 x 2 bytes = 96 KiB of shared
    memory at D = 128). fp32 tiles take twice the bytes: halve the blocks, 2 stages.

    Causal attention and short sequences take 64 x 64 tiles on 4 warps: twice the programs,
    each with half the rows, so the triangle's uneven work spreads over more of them (on an
    H200, b4 h32 d128 in a CUDA graph: causal S = 4096 1.18 ms against 1.26 ms on 128 x 64;
    S = 1024 158 us against 180 us). Long non-causal rows keep 128 x 64.

    The descriptor path with the multiply-add (the lab's probe_tma on an H100, an H200 in
    brackets): long rows at D = 128 take 128 x 128 tiles, S = 4096 1885 us (1891) against
    2152 (2155) on 128 x 64, causal 1057 (1039) against 1086 (1049) on 64 x 64, programs
    reversed; SDPA 1702 (1720), causal 929 (940). S = 1024 keeps 64 x 64: 145 us (145), causal
    95 (95). Triton's warp specialization (tl.range(..., warp_specialize=True)) gained nothing
    on top: 2025 (2004) us at S = 4096. Nor did two query halves per program sharing each key
    tile (the lab's probe_attention_dp, H100): at best 156 us at S = 1024 against 147.

    Those times were taken on a card fresh from idle. With every config timed in turn after the
    clock has settled (the lab's probe_attention_tiles, H100, 2026-12-06), non-causal S = 1024
    at D = 128 is faster on 128 x 128 too: 155.7 us against 160.5 on 64 x 64 (SDPA 116.6);
    causal S = 1024 keeps 64 x 64 (101.2 against 116.4).

    In that probe's later runs a lean kernel with one unmasked key loop beat the solution by
    about 6%: adding the solution's second, masked loop to it, empty at these shapes, cost 8.5
    us at S = 1024 (157.3 against 148.8) and 121 at S = 4096 (2131.7 against 2011.0). That loop
    is compiled only when it can have work (PARTIAL_TAIL). Without it, timed in a shuffled
    rotation, 128 x 128 tiles one program a tile took 153.7 and 2042.0 us (SDPA 122.5 and
    1898.1), and a persistent grid, one program an SM walking the tiles, 157.1 and 2052.6: one
    program a tile stays (docs/reports/2026-12-06/probes-attention-tail.md).
    """
    if itemsize == 4:
        return Config(64, 32, 4, 2)
    if descriptors and head_dim == 128 and not causal:
        return Config(128, 128, 8, 3)
    if descriptors and seq_len > SHORT_SEQ:
        if causal:  # non-causal D = 128 returned above
            return Config(128, 128, 8, 3)
        return Config(128, 64, 4, 3)
    if causal or seq_len <= SHORT_SEQ:
        return Config(64, 64, 4, 3)
    return Config(128, 64, (4 if head_dim <= 64 else 8), 3)


def _rows_for_descriptors(t: torch.Tensor) -> bool:
    """A contiguous [B, H, S, D] tensor, 16-byte aligned: its [B * H * S, D] rows can be read
    through a tensor descriptor."""
    return t.is_contiguous() and t.data_ptr() % 16 == 0


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
) -> torch.Tensor:
    """Scaled dot-product attention, forward: softmax(q @ k^T * sm_scale [causal]) @ v.

    q, k, v: [B, H, S, D], one dtype (float32, float16 or bfloat16), D in {16, 32, 64, 128}.
    They may be strided views (e.g. a [B, S, H, D] tensor transposed to [B, H, S, D]); only the
    last dimension must be contiguous, else it is copied. sm_scale defaults to 1 / sqrt(D).
    causal masks key j > query i. Returns a new contiguous [B, H, S, D] tensor of q's dtype.
    """
    if q.dim() != 4 or k.shape != q.shape or v.shape != q.shape:
        raise ValueError(
            f"q, k, v must share one [B, H, S, D] shape, got {q.shape}, {k.shape}, {v.shape}"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    batch, n_heads, seq_len, head_dim = q.shape
    if head_dim not in (16, 32, 64, 128):
        raise ValueError(f"head dim must be 16, 32, 64 or 128, got {head_dim}")
    q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(head_dim)
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)

    descriptors = q.element_size() == 2 and all(_rows_for_descriptors(t) for t in (q, k, v))
    block_m, block_n, num_warps, num_stages = _config(
        head_dim, q.element_size(), seq_len, causal, descriptors
    )
    if descriptors:
        rows = [t.view(batch * n_heads * seq_len, head_dim) for t in (q, k, v)]
        q_desc = TensorDescriptor.from_tensor(rows[0], [block_m, head_dim])
        k_desc = TensorDescriptor.from_tensor(rows[1], [block_n, head_dim])
        v_desc = TensorDescriptor.from_tensor(rows[2], [block_n, head_dim])
    else:
        q_desc = k_desc = v_desc = None
    grid = (triton.cdiv(seq_len, block_m), batch * n_heads)
    _attn_fwd_kernel[grid](
        q,
        k,
        v,
        out,
        q_desc,
        k_desc,
        v_desc,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        k.stride(0),
        k.stride(1),
        k.stride(2),
        v.stride(0),
        v.stride(1),
        v.stride(2),
        out.stride(0),
        out.stride(1),
        out.stride(2),
        n_heads,
        seq_len,
        sm_scale * LOG2E,
        CAUSAL=bool(causal),
        HEAD_DIM=head_dim,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        DESC=descriptors,
        PARTIAL_TAIL=seq_len % block_n != 0,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return out
