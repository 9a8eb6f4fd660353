"""F3 reference: fused_add_rmsnorm and silu_and_mul, two small fused ops of a decoder layer.

fused_add_rmsnorm adds a sublayer's output into the residual stream and normalizes the sum in
one pass, writing both results in place. silu_and_mul is the SwiGLU gate that sits between the
gate_up projection and the down projection of the MLP.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

MAX_GRID_ROWS = 65535  # the most programs a grid's axis 1 can hold
DECODE_ROWS = 128  # at most this many rows (tokens): fewer rows than an H100/H200 has SMs


@triton.jit
def _fused_add_rmsnorm_kernel(
    x_ptr,
    residual_ptr,
    weight_ptr,
    x_row_stride,
    residual_row_stride,
    n_cols,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)  # int64: row * stride can pass 2**31 elements
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_cols
    x_row = x_ptr + row_idx * x_row_stride
    residual_row = residual_ptr + row_idx * residual_row_stride

    x = tl.load(x_row + offsets, mask=mask, other=0.0).to(tl.float32)
    residual = tl.load(residual_row + offsets, mask=mask, other=0.0).to(tl.float32)
    # Loaded with x and residual, not after the sum: its trip to memory overlaps theirs
    # instead of waiting behind the reduction (see _norm_num_warps for what that saves).
    weight = tl.load(weight_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    h = x + residual  # padded lanes hold 0 + 0, so they add nothing to the sum of squares
    # The new residual stream is h rounded to residual's dtype ...
    tl.store(residual_row + offsets, h.to(residual_ptr.dtype.element_ty), mask=mask)
    # ... while the norm keeps using the fp32 h from registers, as FlashInfer does.
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    tl.store(x_row + offsets, (h * rstd * weight).to(x_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_and_mul_kernel(
    x_ptr,
    out_ptr,
    # Compile-time constants, as torch.compile makes them (see silu_and_mul): one compile per
    # model width, and no run-time sizes left in the address arithmetic.
    x_row_stride: tl.constexpr,
    out_row_stride: tl.constexpr,
    d: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(1).to(tl.int64)  # axis 1: rows; axis 0: column blocks
    # No reduction along the row, so a long row can be cut into independent column blocks.
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < d
    x_row = x_ptr + row_idx * x_row_stride

    gate = tl.load(x_row + offsets, mask=mask, other=0.0).to(tl.float32)  # first half
    up = tl.load(x_row + d + offsets, mask=mask, other=0.0).to(tl.float32)  # second half
    out = gate * tl.sigmoid(gate) * up  # silu(g) = g * sigmoid(g)
    out_row = out_ptr + row_idx * out_row_stride
    tl.store(out_row + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def _norm_num_warps(block_size: int, n_rows: int) -> int:
    """4 warps up to 2048 columns, then one per 512 (8 at 4096): 8-16 values a thread from 1024.

    A decode step has fewer rows than the card has SMs: each row's latency is then the whole
    kernel's time, so it is spread over 16 warps. On an H200 (T = 16, H = 4096, CUDA graph,
    inputs rotated past the L2): 2.49 us with the weight loaded after the sum, 2.29 with it
    loaded beside x (8 warps 2.23, 4 warps 2.36); torch.compile 2.66, an empty launch 0.69.
    """
    if n_rows <= DECODE_ROWS:
        return 16
    return min(16, max(4, block_size // 512))


def fused_add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> None:
    """In place: h = x + residual (fp32); residual <- h; x <- h * rsqrt(mean(h**2) + eps) * weight.

    x and residual are [..., H] with the same shape; weight is [H]. residual receives h rounded
    to its dtype; the norm is computed from the fp32 h, not from that rounded copy. Rows may be
    strided (a slice of a wider buffer), but each row must be contiguous.
    """
    n_cols = x.shape[-1]
    if residual.shape != x.shape:
        raise ValueError(f"residual has shape {tuple(residual.shape)}, x has {tuple(x.shape)}")
    if weight.shape != (n_cols,):
        raise ValueError(f"weight has shape {tuple(weight.shape)}, expected ({n_cols},)")
    # view, never reshape: reshape copies a tensor it cannot flatten, the kernel would write
    # into that copy, and the caller's x and residual would silently keep their old values.
    x_2d = x.view(-1, n_cols)
    residual_2d = residual.view(-1, n_cols)
    if x_2d.stride(1) != 1 or residual_2d.stride(1) != 1:
        raise ValueError("the last dimension of x and residual must be contiguous")
    weight = weight.contiguous()  # only read, so a copy is harmless

    block_size = triton.next_power_of_2(n_cols)
    _fused_add_rmsnorm_kernel[(x_2d.shape[0],)](
        x_2d,
        residual_2d,
        weight,
        x_2d.stride(0),
        residual_2d.stride(0),
        n_cols,
        eps,
        BLOCK_SIZE=block_size,
        num_warps=_norm_num_warps(block_size, x_2d.shape[0]),
    )


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """out = silu(x[..., :d]) * x[..., d:] for x of shape [..., 2d]; returns a new [..., d].

    The first half is the gate (through silu = g * sigmoid(g)), the second half is up. The
    grid is (cdiv(d, BLOCK), rows) with BLOCK = min(1024, next_power_of_2(d)). d and the row
    strides are compile-time constants: at T = 16, I = 14336 on an H100 (CUDA graph, in turn
    with torch.compile) 1.68 us against compile's 1.66, where runtime sizes took 1.75-1.76
    against 1.68-1.70.
    """
    if x.shape[-1] % 2:
        raise ValueError(f"the last dimension of x must be even, got {x.shape[-1]}")
    d = x.shape[-1] // 2
    x_2d = x.reshape(-1, 2 * d)  # x is only read, so a copy here would be harmless
    if x_2d.stride(1) != 1:
        x_2d = x_2d.contiguous()
    out = torch.empty((*x.shape[:-1], d), dtype=x.dtype, device=x.device)
    out_2d = out.view(-1, d)

    block_size = min(1024, triton.next_power_of_2(d))
    # Column blocks on axis 0, the one that varies fastest: programs launched one after another
    # read one row front to back. With rows there, they took the same columns of rows 2d apart:
    # 121.5 against 116.7 us on an H100 (T = 4096, I = 14336, bf16), where torch.compile took
    # 116.7. Axis 1 holds at most 65535 programs, so longer inputs go in slices of rows.
    for first in range(0, x_2d.shape[0], MAX_GRID_ROWS):
        rows = slice(first, first + MAX_GRID_ROWS)
        x_rows, out_rows = x_2d[rows], out_2d[rows]
        grid = (triton.cdiv(d, block_size), x_rows.shape[0])
        _silu_and_mul_kernel[grid](
            x_rows,
            out_rows,
            x_2d.stride(0),
            out_2d.stride(0),
            d,
            BLOCK_SIZE=block_size,
            num_warps=4,  # 1024 columns over 128 threads: 8 bf16 = one 16-byte load per thread
        )
    return out
