"""the row dot divided by n_cols: a mean of dy*y where the sum belongs."""


from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_backward_kernel(
    y_ptr,
    dy_ptr,
    dx_ptr,
    y_row_stride,
    dy_row_stride,
    dx_row_stride,
    n_cols,
    BLOCK_N: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)  # int64: row_idx * stride may pass 2**31
    offsets = tl.arange(0, BLOCK_N)
    mask = offsets < n_cols

    y = tl.load(y_ptr + row_idx * y_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row_idx * dy_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(dy * y, axis=0) / n_cols  # one number per row; padded lanes add 0 * 0
    dx = y * (dy - dot)

    tl.store(dx_ptr + row_idx * dx_row_stride + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def _num_warps(block_n: int) -> int:
    """Warps for one row of block_n lanes: 8 to 16 elements per thread up to N = 8192."""
    if block_n <= 1024:
        return 4
    if block_n <= 4096:
        return 8
    return 16


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """The gradient of softmax over the last dimension: dx = y * (dy - sum(dy * y, dim=-1)).

    y: (..., N), the forward's output softmax(x); dy: the same shape, the gradient flowing
    back into y. float32 / float16 / bfloat16; rows may be strided (e.g. base[..., :N]), each
    tensor with its own row stride; only the last dimension must be contiguous, else the
    tensor is copied once. One row must fit in one block (N up to a few tens of thousands).
    Returns dx, a new contiguous tensor of y's shape in dy's dtype.
    """
    if y.shape != dy.shape:
        raise ValueError(
            f"y and dy must have the same shape, got {tuple(y.shape)} and {tuple(dy.shape)}"
        )
    if y.device != dy.device:
        raise ValueError(f"y is on {y.device} and dy on {dy.device}")
    n_cols = y.shape[-1]
    if y.stride(-1) != 1:
        y = y.contiguous()
    if dy.stride(-1) != 1:
        dy = dy.contiguous()
    y_rows = y.reshape(-1, n_cols)  # views when the leading dims merge; strides may be > N
    dy_rows = dy.reshape(-1, n_cols)
    dx_rows = torch.empty(dy_rows.shape, dtype=dy.dtype, device=dy.device)
    block_n = triton.next_power_of_2(n_cols)
    _softmax_backward_kernel[(dy_rows.shape[0],)](
        y_rows,
        dy_rows,
        dx_rows,
        y_rows.stride(0),
        dy_rows.stride(0),
        dx_rows.stride(0),
        n_cols,
        BLOCK_N=block_n,
        num_warps=_num_warps(block_n),
    )
    return dx_rows.view(dy.shape)
