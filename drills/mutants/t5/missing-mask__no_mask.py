"""Mutant of t5: no mask at all: edge tiles read past x and write past the edges of y."""

import torch
import triton
import triton.language as tl


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, sxm, sxn, sym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offsets_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offsets_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    tile = tl.load(x_ptr + offsets_m[:, None] * sxm + offsets_n[None, :] * sxn)
    tl.store(y_ptr + offsets_n[:, None] * sym + offsets_m[None, :], tl.trans(tile))


def transpose(x: torch.Tensor) -> torch.Tensor:
    m, n = x.shape
    y = torch.empty((n, m), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
    _transpose_kernel[grid](x, y, x.stride(0), x.stride(1), y.stride(0), BLOCK_M=64, BLOCK_N=64)
    return y
