"""An f4 mutant: head blocks counted with H // BLOCK_H instead of triton.cdiv, so the last,
partial block of heads is never launched (H = 3 or 5 with BLOCK_H = 2 miss the last head).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _k(
    x_ptr,
    cos_ptr,
    sin_ptr,
    pos_ptr,
    out_ptr,
    sxt,
    sxh,
    scos,
    n_heads,
    half,
    BLOCK_H: tl.constexpr,
    BLOCK_HALF: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    hs = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ln = tl.arange(0, BLOCK_HALF)
    msk = (hs < n_heads)[:, None] & (ln < half)[None, :]
    p = tl.load(pos_ptr + t)
    c = tl.load(cos_ptr + p * scos + ln, mask=ln < half, other=0.0)[None, :]
    s = tl.load(sin_ptr + p * scos + ln, mask=ln < half, other=0.0)[None, :]
    px = x_ptr + t * sxt + hs[:, None] * sxh + ln[None, :]
    x1 = tl.load(px, mask=msk, other=0.0).to(tl.float32)
    x2 = tl.load(px + half, mask=msk, other=0.0).to(tl.float32)
    po = out_ptr + (t * n_heads + hs[:, None]) * (2 * half) + ln[None, :]
    tl.store(po, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=msk)
    tl.store(po + half, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=msk)


def apply_rope(x, cos, sin, positions):
    T, H, D = x.shape
    out = torch.empty((T, H, D), dtype=x.dtype, device=x.device)
    BH = 2
    _k[(T, max(1, H // BH))](
        x,
        cos,
        sin,
        positions,
        out,
        x.stride(0),
        x.stride(1),
        cos.stride(0),
        H,
        D // 2,
        BLOCK_H=BH,
        BLOCK_HALF=triton.next_power_of_2(D // 2),
        num_warps=4,
    )
    return out
