"""f4 head-stride__out_with_x_strides: out addressed with x's strides (persistent style)"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rotate(a, b, c, s):
    return a * c - b * s, b * c + a * s


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, positions_ptr, out_ptr, x_token_stride, x_head_stride,
                 cos_row_stride, sin_row_stride, out_token_stride, out_head_stride, n_tokens,
                 n_heads, half_dim, BLOCK_HALF: tl.constexpr):
    lane = tl.arange(0, BLOCK_HALF)
    keep = lane < half_dim
    for tok in range(tl.program_id(0), n_tokens, tl.num_programs(0)):
        tok64 = tok.to(tl.int64)
        p = tl.load(positions_ptr + tok64)
        cc = tl.load(cos_ptr + p * cos_row_stride + lane, mask=keep, other=1.0)
        ss = tl.load(sin_ptr + p * sin_row_stride + lane, mask=keep, other=0.0)
        for hd in range(0, n_heads):
            src = x_ptr + tok64 * x_token_stride + hd * x_head_stride
            dst = out_ptr + tok64 * x_token_stride + hd * x_head_stride
            a = tl.load(src + lane, mask=keep, other=0.0).to(tl.float32)
            b = tl.load(src + half_dim + lane, mask=keep, other=0.0).to(tl.float32)
            ya, yb = _rotate(a, b, cc, ss)
            tl.store(dst + lane, ya.to(out_ptr.dtype.element_ty), mask=keep)
            tl.store(dst + half_dim + lane, yb.to(out_ptr.dtype.element_ty), mask=keep)


def apply_rope(x, cos, sin, positions):
    n_tok, n_head, dim = x.shape
    if x.stride(-1) != 1:
        x = x.contiguous()
    out = torch.empty(n_tok, n_head, dim, dtype=x.dtype, device=x.device)
    half = dim // 2
    progs = max(1, min(n_tok, 3))
    _rope_kernel[(progs,)](x, cos, sin, positions, out, x.stride(0), x.stride(1), cos.stride(0),
                           sin.stride(0), out.stride(0), out.stride(1), n_tok, n_head, half,
                           BLOCK_HALF=triton.next_power_of_2(half))
    return out
