"""Mutant of t4: two rows per program, and the grid rounds the row count down."""

import torch
import triton
import triton.language as tl

ROWS_PER_PROGRAM = 2


@triton.jit
def _kernel(X, Y, sx, sy, n, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    for r in range(ROWS):
        row = tl.program_id(0).to(tl.int64) * ROWS + r
        m = float("-inf")
        s = 0.0
        for start in range(0, n, BLOCK):
            cols = start + lanes
            v = tl.load(X + row * sx + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(v, axis=0))
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(v - m_safe), axis=0)
            m = m_new
        for start in range(0, n, BLOCK):
            cols = start + lanes
            v = tl.load(X + row * sx + cols, mask=cols < n, other=float("-inf")).to(tl.float32)
            tl.store(Y + row * sy + cols, (tl.exp(v - m) / s).to(Y.dtype.element_ty),
                     mask=cols < n)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    x2 = (x if x.stride(-1) == 1 else x.contiguous()).reshape(-1, n)
    y2 = torch.empty_like(x2)
    grid = (x2.shape[0] // ROWS_PER_PROGRAM,)  # 7 rows: 3 programs, row 6 never written
    _kernel[grid](x2, y2, x2.stride(0), y2.stride(0), n, BLOCK=1024, ROWS=ROWS_PER_PROGRAM,
                  num_warps=4)
    return y2.view(x.shape)
