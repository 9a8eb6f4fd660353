"""Drill m3: flash-attention forward as a Triton kernel.

    out[b, h] = softmax(q[b, h] @ k[b, h]^T * sm_scale) @ v[b, h]

q, k, v are [B, H, S, D]; with causal=True, key j is hidden from query i when j > i. The
S x S score matrix must never be stored: one program handles BLOCK_M query rows of one
(batch, head) and walks the keys in blocks of BLOCK_N, keeping an online softmax per row:

    m    the running max of the scores seen so far          (starts at -inf)
    l    the running sum of exp(score - m)                   (starts at 0)
    acc  the running sum of exp(score - m) * v, in float32   (starts at 0)

When a key block raises the max from m_old to m_new, everything summed so far was computed
against m_old: both l and acc must be multiplied by exp(m_old - m_new) before the block's own
terms are added. At the end, out = acc / l.

exp2 is cheaper than exp on the GPU: exp(x) = exp2(x * log2(e)). Fold log2(e) = 1.4427 into
the scale once (qk_scale = sm_scale * log2(e)) and keep m in the same log2 units.

Blocks: BLOCK_M = BLOCK_N = 64 is a good start (128 x 64 is what Triton's tutorial uses on the
GPU). tl.dot needs every tile dimension >= 16. On the CPU (tutor check --cpu) the interpreter
runs programs one after another: BLOCK_N <= 64 keeps it fast, and the tests use S = 200, 150
and 40, so every block size sees several key blocks and a partial last one: keys past S must
score -inf, query rows past S must not be stored.

The lesson is drills/content/m3.md. Check your work with `tutor check m3`.
"""

from __future__ import annotations

import math  # noqa: F401 - for the default sm_scale, 1 / math.sqrt(D)

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # log2(e): e^x = 2^(x * log2(e))


@triton.jit
def _attn_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
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
):
    """out rows [pid0 * BLOCK_M, (pid0 + 1) * BLOCK_M) of head pid1 (= batch * n_heads + head).

    Element [b, h, s, d] of q sits at q_ptr + b * q_batch_stride + h * q_head_stride
    + s * q_seq_stride + d (d is contiguous); the same for k, v and o. qk_scale is
    sm_scale * log2(e).
    """
    # TODO: start_m = tl.program_id(0) * BLOCK_M; batch_head = tl.program_id(1).to(tl.int64);
    #       batch and head from batch_head and n_heads; the four base pointers.
    # TODO: offs_m = start_m + tl.arange(0, BLOCK_M), offs_d = tl.arange(0, HEAD_DIM); load the
    #       [BLOCK_M, HEAD_DIM] q tile with a mask on the rows past seq_len.
    # TODO: m_i (-inf), l_i (0) and acc ([BLOCK_M, HEAD_DIM], 0), all tl.float32.
    # TODO: loop start_n over the key blocks (causal: none above this block's last row).
    #       - load k as a [HEAD_DIM, BLOCK_N] tile (k^T) and v as [BLOCK_N, HEAD_DIM], masked
    #         on the keys past seq_len;
    #       - scores = tl.dot(q, k) * qk_scale; keys past seq_len (and, causal, keys after the
    #         query) -> float("-inf") with tl.where;
    #       - m_new = max(m_i, row max); alpha = tl.exp2(m_i - m_new); p = tl.exp2(scores - m_new);
    #       - l_i = l_i * alpha + row sum of p; acc = acc * alpha + tl.dot(p.to(v.dtype), v);
    #       - m_i = m_new.
    # TODO: out = acc / l_i[:, None]; store it as o's dtype, masked on the rows past seq_len.
    pass


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
) -> torch.Tensor:
    """Scaled dot-product attention, forward: softmax(q @ k^T * sm_scale [causal]) @ v.

    q, k, v: [B, H, S, D], one dtype (float32, float16 or bfloat16), D in {16, 32, 64, 128}.
    They may be strided views (e.g. a [B, S, H, D] tensor transposed to [B, H, S, D]): pass
    their strides to the kernel; only the last dimension must be contiguous (else copy it).
    sm_scale defaults to 1 / sqrt(D). causal hides key j from query i when j > i.
    Returns a new [B, H, S, D] tensor of q's dtype.
    """
    # TODO: check the shapes (4-D, equal) and dtypes; batch, n_heads, seq_len, head_dim.
    # TODO: sm_scale = 1 / sqrt(head_dim) when it is None.
    # TODO: out = torch.empty(q.shape, dtype=q.dtype, device=q.device).
    # TODO: grid = (triton.cdiv(seq_len, BLOCK_M), batch * n_heads); launch the kernel with the
    #       strides of q, k, v, out (dims 0, 1, 2), n_heads, seq_len, sm_scale * LOG2E, and
    #       CAUSAL=, HEAD_DIM=, BLOCK_M=, BLOCK_N=, num_warps= by keyword.
    raise NotImplementedError("TODO: write attention and its kernel")
