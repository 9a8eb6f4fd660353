"""F7 correct variant: exp2 and log2 with the log2(e) factors, fewer heads per program."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def _merge_states_kernel(
    v_a_ptr,
    lse_a_ptr,
    v_b_ptr,
    lse_b_ptr,
    v_ptr,
    lse_ptr,
    v_a_token_stride,
    v_a_head_stride,
    v_b_token_stride,
    v_b_head_stride,
    lse_a_token_stride,
    lse_a_head_stride,
    lse_b_token_stride,
    lse_b_head_stride,
    n_heads,
    head_dim,
    BLOCK_H: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)  # int64: token * stride can pass 2**31 elements
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    offsets = tl.arange(0, BLOCK_D)
    head_mask = heads < n_heads
    mask = head_mask[:, None] & (offsets < head_dim)[None, :]

    # -inf is an empty part: no keys, weight exp(-inf) = 0.
    lse_a = tl.load(lse_a_ptr + token_idx * lse_a_token_stride + heads * lse_a_head_stride,
                    mask=head_mask, other=float("-inf"))
    lse_b = tl.load(lse_b_ptr + token_idx * lse_b_token_stride + heads * lse_b_head_stride,
                    mask=head_mask, other=float("-inf"))
    m = tl.maximum(lse_a, lse_b)
    # Both parts empty: m = -inf and lse - m would be -inf - (-inf) = NaN. Subtract 0 instead,
    # so both weights are exp(-inf) = 0.
    m = tl.where(m == float("-inf"), 0.0, m)
    w_a = tl.exp2((lse_a - m) * LOG2E)  # <= 1: the larger part has weight exactly 1
    w_b = tl.exp2((lse_b - m) * LOG2E)
    total = w_a + w_b  # in [1, 2], or 0 when both parts are empty
    inv_total = tl.where(total > 0, 1.0 / total, 0.0)  # empty + empty: v = 0, not 0/0
    scale_a = (w_a * inv_total)[:, None]
    scale_b = (w_b * inv_total)[:, None]

    v_a_tile = v_a_ptr + token_idx * v_a_token_stride + heads[:, None] * v_a_head_stride
    v_b_tile = v_b_ptr + token_idx * v_b_token_stride + heads[:, None] * v_b_head_stride
    v_a = tl.load(v_a_tile + offsets[None, :], mask=mask, other=0.0).to(tl.float32)
    v_b = tl.load(v_b_tile + offsets[None, :], mask=mask, other=0.0).to(tl.float32)
    v = v_a * scale_a + v_b * scale_b

    out_tile = v_ptr + (token_idx * n_heads + heads[:, None]) * head_dim + offsets[None, :]
    tl.store(out_tile, v.to(v_ptr.dtype.element_ty), mask=mask)
    # log(0) = -inf, so both parts empty give m + log(total) = 0 + -inf = -inf.
    tl.store(lse_ptr + token_idx * n_heads + heads, m + tl.log2(total) * LN2, mask=head_mask)


def merge_attn_states(
    v_a: torch.Tensor, lse_a: torch.Tensor, v_b: torch.Tensor, lse_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge two partial attention results for the same queries: returns (v, lse).

    v_a, v_b are [T, H, D] (same dtype); lse_a, lse_b are [T, H] fp32 natural-log
    log-sum-exps of each part's scores (-inf for a part with no keys). In fp32:

        m = max(lse_a, lse_b);  w_a = exp(lse_a - m);  w_b = exp(lse_b - m)
        v = (w_a * v_a + w_b * v_b) / (w_a + w_b)       (in v_a's dtype)
        lse = m + log(w_a + w_b)                          (fp32)

    Both parts empty give v = 0 and lse = -inf. Any strides are accepted for the lse tensors
    (flash attention returns lse as [H, T]); each head of v must be contiguous.
    """
    if v_a.dim() != 3 or v_b.shape != v_a.shape:
        raise ValueError(f"v_a and v_b must be the same [T, H, D], got {tuple(v_a.shape)} "
                         f"and {tuple(v_b.shape)}")
    n_tokens, n_heads, head_dim = v_a.shape
    if lse_a.shape != (n_tokens, n_heads) or lse_b.shape != (n_tokens, n_heads):
        raise ValueError(f"lse_a and lse_b must be [{n_tokens}, {n_heads}], got "
                         f"{tuple(lse_a.shape)} and {tuple(lse_b.shape)}")
    if v_a.stride(2) != 1:
        v_a = v_a.contiguous()  # only read: a copy is harmless
    if v_b.stride(2) != 1:
        v_b = v_b.contiguous()
    v = torch.empty((n_tokens, n_heads, head_dim), dtype=v_a.dtype, device=v_a.device)
    lse = torch.empty((n_tokens, n_heads), dtype=torch.float32, device=v_a.device)

    block_d = triton.next_power_of_2(head_dim)
    # About 1024 values per program: 8 per thread with 4 warps, one 16-byte bf16 load each.
    block_h = min(triton.next_power_of_2(n_heads), max(1, 256 // block_d))
    grid = (n_tokens, triton.cdiv(n_heads, block_h))
    _merge_states_kernel[grid](
        v_a,
        lse_a,
        v_b,
        lse_b,
        v,
        lse,
        v_a.stride(0),
        v_a.stride(1),
        v_b.stride(0),
        v_b.stride(1),
        lse_a.stride(0),
        lse_a.stride(1),
        lse_b.stride(0),
        lse_b.stride(1),
        n_heads,
        head_dim,
        BLOCK_H=block_h,
        BLOCK_D=block_d,
        num_warps=4,
    )
    return v, lse
