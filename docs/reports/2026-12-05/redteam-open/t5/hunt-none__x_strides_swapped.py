"""Mistake: the wrapper passes x's two strides in the wrong order (x.stride(1), x.stride(0)): strides are from the tensor, not the shape, but swapped."""
import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 64
NUM_WARPS = 4


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, x_col_stride, y_row_stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offsets_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offsets_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offsets_m[:, None] < n_rows) & (offsets_n[None, :] < n_cols)
    tile = tl.load(x_ptr + offsets_m[:, None] * x_row_stride + offsets_n[None, :] * x_col_stride, mask=mask)
    tl.store(y_ptr + offsets_n[:, None] * y_row_stride + offsets_m[None, :], tl.trans(tile), mask=tl.trans(mask))


def transpose(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(n_rows, BLOCK_M), triton.cdiv(n_cols, BLOCK_N))
    _transpose_kernel[grid](x, y, n_rows, n_cols, x.stride(1), x.stride(0), y.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=NUM_WARPS)
    return y
