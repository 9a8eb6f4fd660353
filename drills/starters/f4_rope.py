"""Drill F4: rotary position embedding (RoPE), NeoX layout.

x is [T, H, D]: T tokens, H heads of D values. Each token t has a position positions[t] (not
t: tokens of several sequences, mid-generation). cos and sin are caches [P, D/2] in fp32, one
row per position. With x1 = x[..., :D/2], x2 = x[..., D/2:], c = cos[positions[t]] and
s = sin[positions[t]], in fp32:

    out[..., :D/2] = x1 * c - x2 * s
    out[..., D/2:] = x2 * c + x1 * s

Lane i of the first half and lane i of the second half are a pair (the NeoX layout, not GPT-J's
even/odd lanes). x may be q or k of a fused qkv tensor: a strided view whose tokens and heads
are not H*D and D apart. The result is a new contiguous [T, H, D] tensor in x's dtype.

Replace every `# TODO` and delete the `raise NotImplementedError` line. Run the tests with
`tutor check f4`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_kernel(
    x_ptr,
    cos_ptr,
    sin_ptr,
    positions_ptr,
    out_ptr,
    x_token_stride,
    x_head_stride,
    cos_row_stride,
    sin_row_stride,
    out_token_stride,
    out_head_stride,
    n_heads,
    half_dim,
    BLOCK_H: tl.constexpr,
    BLOCK_HALF: tl.constexpr,
):
    """Grid (T, cdiv(H, BLOCK_H)): one program per token and block of BLOCK_H heads."""
    # TODO: token_idx from program_id(0) (int64); this program's heads from program_id(1).
    # TODO: offsets over one half (BLOCK_HALF lanes) and a 2-D mask: heads < n_heads and
    #       lanes < half_dim.
    # TODO: load this token's position, then its rows of cos and sin (fp32, D/2 values).
    # TODO: a [BLOCK_H, BLOCK_HALF] tile of pointers into x from both strides; load x1 (the
    #       first half) and x2 (half_dim further on), upcast to fp32.
    # TODO: rotate each pair (x1, x2) and store both halves into out, in out's dtype.
    pass


def apply_rope(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    """NeoX rotary embedding: a new contiguous [T, H, D] tensor in x's dtype.

    With x1 = x[..., :D/2], x2 = x[..., D/2:], c = cos[positions], s = sin[positions] (caches
    [P, D/2] in fp32, positions [T] int64), in fp32:

        out[..., :D/2] = x1 * c - x2 * s
        out[..., D/2:] = x2 * c + x1 * s

    x may be a strided view (q, k of a fused qkv tensor): any token and head strides, but the
    last dimension must be contiguous.
    """
    # TODO: allocate out, a contiguous [T, H, D] in x's dtype.
    # TODO: BLOCK_HALF = next_power_of_2(D // 2); BLOCK_H heads per program (about 2048
    #       lanes per half in all); grid (T, cdiv(H, BLOCK_H)).
    # TODO: launch, passing x's token and head strides (x.stride(0), x.stride(1)), the caches'
    #       row strides, out's strides, and the constexprs and num_warps by keyword.
    raise NotImplementedError("TODO: write apply_rope")
