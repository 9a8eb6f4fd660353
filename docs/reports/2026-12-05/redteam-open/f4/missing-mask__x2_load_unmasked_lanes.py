"""f4 missing-mask__x2_load_unmasked_lanes: x2 loaded with only the row mask (harmless? padded lanes are not stored)"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, positions_ptr, out_ptr, x_token_stride, x_head_stride,
                 cos_row_stride, sin_row_stride, out_token_stride, out_head_stride, n_pairs,
                 n_heads, half_dim, ROWS: tl.constexpr, BLOCK_HALF: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = r < n_pairs
    tok = (r // n_heads).to(tl.int64)
    hed = (r % n_heads).to(tl.int64)
    k = tl.arange(0, BLOCK_HALF)
    m2 = rmask[:, None] & (k < half_dim)[None, :]
    pos = tl.load(positions_ptr + tok, mask=rmask, other=0)
    cs = tl.load(cos_ptr + pos[:, None] * cos_row_stride + k[None, :], mask=m2, other=0.0)
    sn = tl.load(sin_ptr + pos[:, None] * sin_row_stride + k[None, :], mask=m2, other=0.0)
    xin = x_ptr + (tok * x_token_stride + hed * x_head_stride)[:, None] + k[None, :]
    first = tl.load(xin, mask=m2, other=0.0).to(tl.float32)
    second = tl.load(xin + half_dim, mask=rmask[:, None], other=0.0).to(tl.float32)
    o1 = first * cs - second * sn
    o2 = second * cs + first * sn
    xout = out_ptr + (tok * out_token_stride + hed * out_head_stride)[:, None] + k[None, :]
    tl.store(xout, o1.to(out_ptr.dtype.element_ty), mask=m2)
    tl.store(xout + half_dim, o2.to(out_ptr.dtype.element_ty), mask=m2)


def apply_rope(x, cos, sin, positions):
    T, H, D = x.shape
    if x.stride(2) != 1:
        x = x.contiguous()
    out = torch.empty((T, H, D), dtype=x.dtype, device=x.device)
    ROWS = 4
    n_pairs = T * H
    grid = (triton.cdiv(n_pairs, ROWS),)
    _rope_kernel[grid](x, cos, sin, positions, out, x.stride(0), x.stride(1), cos.stride(0),
                       sin.stride(0), out.stride(0), out.stride(1), n_pairs, H, D // 2,
                       ROWS=ROWS, BLOCK_HALF=triton.next_power_of_2(D // 2))
    return out
