"""t2 mutant (block-pointers): each row is read through tl.make_block_ptr, as tutorials from
before Triton 3.9 teach; Triton 3.9 removed block pointers for tensor descriptors.
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

    n_rows = tl.num_programs(0)
    x_block = tl.make_block_ptr(
        base=x_ptr, shape=(n_rows, n_cols), strides=(x_row_stride, 1),
        offsets=(row_idx, 0), block_shape=(1, BLOCK_N), order=(1, 0),
    )
    x = tl.load(x_block, boundary_check=(1,), padding_option="nan")
    x = tl.reshape(x, (BLOCK_N,))
    x = tl.where(mask, x, float("-inf"))
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
