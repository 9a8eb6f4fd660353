"""t5 buggy: copy-paste slip in the mask: both conditions compare against n_rows, so the column
edge is checked against the wrong bound (columns never cut at N)."""
import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 64
NUM_WARPS = 4


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, x_col_stride, y_row_stride,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0).to(tl.int64)
    pn = tl.program_id(1).to(tl.int64)
    om = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    on = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    mk = (om[:, None] < n_rows) & (on[None, :] < n_rows)
    tile = tl.load(x_ptr + om[:, None] * x_row_stride + on[None, :] * x_col_stride, mask=mk)
    tl.store(y_ptr + on[:, None] * y_row_stride + om[None, :], tl.trans(tile), mask=tl.trans(mk))


def transpose(x):
    M, N = x.shape
    y = torch.empty((N, M), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _transpose_kernel[grid](x, y, M, N, x.stride(0), x.stride(1), y.stride(0),
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=NUM_WARPS)
    return y
