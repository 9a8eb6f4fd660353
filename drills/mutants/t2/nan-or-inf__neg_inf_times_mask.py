"""Mutant of t2: every load and store is masked, padded lanes load as -inf, and then the
padding is "zeroed" by multiplying with the mask: -inf * 0 = NaN, and the NaN spreads to the
whole row through the sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_N: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    keep = mask.to(tl.float32)
    x = tl.load(x_ptr + row_idx * x_row_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = (x - tl.max(x, axis=0)) * keep
    numerator = tl.exp(shifted) * keep
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row_idx * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    if x.stride(-1) != 1:
        x = x.contiguous()
    rows = x.reshape(-1, n_cols)
    out = torch.empty(rows.shape, dtype=x.dtype, device=x.device)
    _softmax_kernel[(rows.shape[0],)](rows, out, rows.stride(0), out.stride(0), n_cols,
                                      BLOCK_N=triton.next_power_of_2(n_cols))
    return out.view(x.shape)
