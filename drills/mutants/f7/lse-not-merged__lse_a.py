"""F7 mutant (lse-not-merged): The output lse is lse_a, passed through.

One program per (token, head), the weights as a sigmoid of lse_a - lse_b.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _merge_head_kernel(
    v_a_ptr, lse_a_ptr, v_b_ptr, lse_b_ptr, v_ptr, lse_ptr,
    v_a_token_stride, v_a_head_stride, v_b_token_stride, v_b_head_stride,
    lse_a_token_stride, lse_a_head_stride, lse_b_token_stride, lse_b_head_stride,
    head_dim, BLOCK_D: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    head_idx = tl.program_id(1)
    n_heads = tl.num_programs(1)
    offsets = tl.arange(0, BLOCK_D)
    mask = offsets < head_dim

    lse_a = tl.load(lse_a_ptr + token_idx * lse_a_token_stride + head_idx * lse_a_head_stride)
    lse_b = tl.load(lse_b_ptr + token_idx * lse_b_token_stride + head_idx * lse_b_head_stride)
    empty = (lse_a == float("-inf")) & (lse_b == float("-inf"))
    diff = tl.where(empty, 0.0, lse_b - lse_a)
    scale_a = tl.where(empty, 0.0, 1.0 / (1.0 + tl.exp(diff)))
    scale_b = tl.where(empty, 0.0, 1.0 - scale_a)
    lse = lse_a

    v_a = tl.load(v_a_ptr + token_idx * v_a_token_stride + head_idx * v_a_head_stride + offsets,
                  mask=mask, other=0.0).to(tl.float32)
    v_b = tl.load(v_b_ptr + token_idx * v_b_token_stride + head_idx * v_b_head_stride + offsets,
                  mask=mask, other=0.0).to(tl.float32)
    v = v_a * scale_a + v_b * scale_b
    tl.store(v_ptr + (token_idx * n_heads + head_idx) * head_dim + offsets,
             v.to(v_ptr.dtype.element_ty), mask=mask)
    tl.store(lse_ptr + token_idx * n_heads + head_idx, lse)


def merge_attn_states(
    v_a: torch.Tensor, lse_a: torch.Tensor, v_b: torch.Tensor, lse_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    n_tokens, n_heads, head_dim = v_a.shape
    v = torch.empty((n_tokens, n_heads, head_dim), dtype=v_a.dtype, device=v_a.device)
    lse = torch.empty((n_tokens, n_heads), dtype=torch.float32, device=v_a.device)
    _merge_head_kernel[(n_tokens, n_heads)](
        v_a, lse_a, v_b, lse_b, v, lse,
        v_a.stride(0), v_a.stride(1), v_b.stride(0), v_b.stride(1),
        lse_a.stride(0), lse_a.stride(1), lse_b.stride(0), lse_b.stride(1),
        head_dim, BLOCK_D=triton.next_power_of_2(head_dim), num_warps=1,
    )
    return v, lse
