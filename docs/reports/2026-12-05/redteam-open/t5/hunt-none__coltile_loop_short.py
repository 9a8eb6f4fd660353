"""Mistake: one program per row tile, looping over the column tiles with range(0, cdiv(n_cols, BLOCK_N) - 1): the loop bound is one short, the last column tile is never copied."""
import torch
import triton
import triton.language as tl

BLOCK_M = 32
BLOCK_N = 32


@triton.jit
def _copy_tile(x_ptr, y_ptr, offsets_m, offsets_n, n_rows, n_cols, x_row_stride, x_col_stride, y_row_stride):
    mask = (offsets_m[:, None] < n_rows) & (offsets_n[None, :] < n_cols)
    tile = tl.load(x_ptr + offsets_m[:, None] * x_row_stride + offsets_n[None, :] * x_col_stride, mask=mask)
    tl.store(y_ptr + offsets_n[:, None] * y_row_stride + offsets_m[None, :], tl.trans(tile), mask=tl.trans(mask))


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, x_col_stride, y_row_stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offsets_m = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    for j in range(0, tl.cdiv(n_cols, BLOCK_N) - 1):
        offsets_n = j * BLOCK_N + tl.arange(0, BLOCK_N)
        _copy_tile(x_ptr, y_ptr, offsets_m, offsets_n, n_rows, n_cols, x_row_stride, x_col_stride, y_row_stride)


def transpose(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    _transpose_kernel[(triton.cdiv(n_rows, BLOCK_M),)](x, y, n_rows, n_cols, x.stride(0), x.stride(1), y.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y
