"""t2 mutant (mismatch): a persistent kernel of 2 programs walks groups of 2 rows, and its loop
stops one group short (cdiv(n_rows, 2) - 1), so the last rows are never written. On 4 rows its
2 programs happen to stop where a grid of 2 would have; the other tests stop where no grid
would, so the run does not call it grid-too-small."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

ROWS = 2
PROGRAMS = 2


@triton.jit
def _softmax_groups(x_ptr, y_ptr, n_rows, n_cols, x_stride, y_stride,
                    ROWS: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    cols = tl.arange(0, BLOCK)
    n_groups = tl.cdiv(n_rows, ROWS)
    for g in range(tl.program_id(0), n_groups - 1, tl.num_programs(0)):  # one group short
        rows = g.to(tl.int64) * ROWS + tl.arange(0, ROWS)
        inside = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * x_stride + cols[None, :], mask=inside,
                    other=-float("inf")).to(tl.float32)  # fmt: skip
        x = tl.where((rows < n_rows)[:, None], x, 0.0)
        e = tl.exp(x - tl.max(x, axis=1)[:, None])
        y = e / tl.sum(e, axis=1)[:, None]
        tl.store(y_ptr + rows[:, None] * y_stride + cols[None, :],
                 y.to(y_ptr.dtype.element_ty), mask=inside)  # fmt: skip


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = (x if x.stride(-1) == 1 else x.contiguous()).reshape(-1, n_cols)
    y2 = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
    _softmax_groups[(PROGRAMS,)](
        x2, y2, x2.shape[0], n_cols, x2.stride(0), y2.stride(0),
        ROWS=ROWS, BLOCK=triton.next_power_of_2(n_cols),
    )  # fmt: skip
    return y2.view(x.shape)
