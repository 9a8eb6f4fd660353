"""Reference solution for drill t2: softmax over the last dimension as a Triton kernel.

    softmax(x)[..., j] = exp(x[..., j] - m) / sum_k exp(x[..., k] - m),   m = max_k x[..., k]

One program per row; the whole row fits in one block of BLOCK_N = next_power_of_2(N) lanes.
Padded lanes are loaded as -inf: they never win the max and exp(-inf) = 0 adds nothing to the
sum. Subtracting the row max keeps exp from overflowing (softmax does not change when every
element of a row is shifted by the same amount). The math is done in float32.

The row length and the row strides are compile-time constants (`tl.constexpr`): the compiler
then knows which lanes the mask keeps and, from a stride whose bytes are a multiple of 16,
that every row starts 16-byte aligned, so it loads the row in wide pieces. On an H200
(4096 x 1000 bf16, CUDA graph, inputs rotated past the L2): 5.79 us with runtime strides, 5.36
with constant ones (torch.compile 6.45 in the same run). One compile per row length and
stride, which a model with one hidden size pays once.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    x_ptr,
    y_ptr,
    x_row_stride: tl.constexpr,
    y_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)  # int64: row_idx * stride may pass 2**31
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols

    x = tl.load(x_ptr + row_idx * x_row_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=0)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, axis=0)
    y = numerator / denominator

    tl.store(y_ptr + row_idx * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def _num_warps(block_n: int) -> int:
    """Warps for one row of block_n lanes: one warp up to 1024, then 8 to 16 elements a thread.

    A short row is little work: in one warp its max and sum are shuffles, with no wait on
    shared memory. 4096 x 1000 bf16 on an H200 (CUDA graph, inputs rotated past the L2): 6.6 us
    with 4 warps and the row length passed at run time, 5.8 us with 1 warp and it a constexpr;
    torch.compile's 5.0 us.
    """
    if block_n <= 1024:
        return 1
    if block_n <= 4096:
        return 8
    return 16


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of x, any number of leading dims.

    x: (..., N), float32 / float16 / bfloat16. Rows may be strided (e.g. x = base[..., :N]);
    only the last dimension must be contiguous, else x is copied once.
    Returns a new contiguous tensor of x's shape and dtype.
    """
    if not x.is_floating_point():
        raise TypeError(f"softmax needs a floating-point tensor, got {x.dtype}")
    n_cols = x.shape[-1]
    if x.stride(-1) != 1:
        x = x.contiguous()
    x_rows = x.reshape(-1, n_cols)  # a view when the leading dims merge; the row stride may be > N
    y_rows = torch.empty(x_rows.shape, dtype=x.dtype, device=x.device)
    block_n = triton.next_power_of_2(n_cols)
    _softmax_kernel[(x_rows.shape[0],)](
        x_rows,
        y_rows,
        x_rows.stride(0),
        y_rows.stride(0),
        n_cols,
        BLOCK_N=block_n,
        num_warps=_num_warps(block_n),
    )
    return y_rows.view(x.shape)
