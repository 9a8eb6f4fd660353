"""Mutant of t2: a Triton kernel only subtracts each row's first value, and torch.softmax does
the rest: half a fallback (a kernel was launched, but torch computed the softmax)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _shift_rows(x_ptr, out_ptr, stride_x, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=keep, other=0.0).to(tl.float32)
    first = tl.load(x_ptr + row * stride_x).to(tl.float32)
    tl.store(out_ptr + row * n_cols + cols, x - first, mask=keep)


def softmax(x):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    shifted = torch.empty(rows.shape, dtype=torch.float32, device=x.device)
    _shift_rows[(rows.shape[0],)](rows, shifted, rows.stride(0), n,
                                  BLOCK=triton.next_power_of_2(n))
    return torch.softmax(shifted, dim=-1).to(x.dtype).view(x.shape)
