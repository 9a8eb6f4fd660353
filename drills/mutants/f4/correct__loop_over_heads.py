"""F4 correct variant: one program per token, a loop over its heads, cos and sin loaded once."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_token_kernel(
    x_ptr,
    cos_ptr,
    sin_ptr,
    positions_ptr,
    out_ptr,
    x_token_stride,
    x_head_stride,
    cos_row_stride,
    n_heads,
    half_dim,
    BLOCK_HALF: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK_HALF)
    mask = offsets < half_dim
    position = tl.load(positions_ptr + token_idx)
    c = tl.load(cos_ptr + position * cos_row_stride + offsets, mask=mask, other=1.0)
    s = tl.load(sin_ptr + position * cos_row_stride + offsets, mask=mask, other=0.0)
    for head in range(n_heads):
        x_head = x_ptr + token_idx * x_token_stride + head * x_head_stride
        out_head = out_ptr + (token_idx * n_heads + head) * (2 * half_dim)
        x1 = tl.load(x_head + offsets, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(x_head + half_dim + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_head + offsets, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
        tl.store(out_head + half_dim + offsets, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty),
                 mask=mask)


def apply_rope(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    n_tokens, n_heads, head_dim = x.shape
    cos, sin = cos.contiguous(), sin.contiguous()  # the kernel uses one row stride for both
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    _rope_token_kernel[(n_tokens,)](
        x, cos, sin, positions, out, x.stride(0), x.stride(1), cos.stride(0), n_heads,
        head_dim // 2, BLOCK_HALF=triton.next_power_of_2(head_dim // 2), num_warps=1,
    )
    return out
