"""F4 mutant (rope-sign): The per-lane sign is + in the first half and - in the second.

One program per (token, head), the whole head vector in one block.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_head_kernel(
    x_ptr,
    cos_ptr,
    sin_ptr,
    positions_ptr,
    out_ptr,
    x_token_stride,
    x_head_stride,
    cos_row_stride,
    sin_row_stride,
    head_dim,
    half_dim,
    BLOCK_D: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    head_idx = tl.program_id(1)
    n_heads = tl.num_programs(1)
    lanes = tl.arange(0, BLOCK_D)
    mask = lanes < head_dim
    first = lanes < half_dim
    partner = tl.where(first, lanes + half_dim, lanes - half_dim)
    freq = tl.where(first, lanes, lanes - half_dim)

    position = tl.load(positions_ptr + token_idx)
    c = tl.load(cos_ptr + position * cos_row_stride + freq, mask=mask, other=0.0)
    s = tl.load(sin_ptr + position * sin_row_stride + freq, mask=mask, other=0.0)

    x_row = x_ptr + token_idx * x_token_stride + head_idx * x_head_stride
    x = tl.load(x_row + lanes, mask=mask, other=0.0).to(tl.float32)
    x_partner = tl.load(x_row + partner, mask=mask, other=0.0).to(tl.float32)
    sign = tl.where(first, 1.0, -1.0)
    out = x * c + sign * x_partner * s

    out_row = out_ptr + (token_idx * n_heads + head_idx) * head_dim
    tl.store(out_row + lanes, out.to(out_ptr.dtype.element_ty), mask=mask)


def apply_rope(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    n_tokens, n_heads, head_dim = x.shape
    out = torch.empty((n_tokens, n_heads, head_dim), dtype=x.dtype, device=x.device)
    _rope_head_kernel[(n_tokens, n_heads)](
        x,
        cos,
        sin,
        positions,
        out,
        x.stride(0),
        x.stride(1),
        cos.stride(0),
        sin.stride(0),
        head_dim,
        head_dim // 2,
        BLOCK_D=triton.next_power_of_2(head_dim),
        num_warps=2,
    )
    return out
