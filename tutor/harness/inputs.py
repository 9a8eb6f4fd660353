"""Test inputs that expose mistakes: tensors surrounded by NaN, rows with slack after them.

An unmasked load reads the NaN next to the data and the output turns NaN (diagnosed as a
missing mask); an unmasked store overwrites it (caught by `checks.expect_unchanged`).

The guards hold NaN unless `guard_fill(value)` says otherwise: the drill plugin re-runs a test
with zero guards before it claims a missing mask, so NaN the kernel makes itself (inf * 0, say)
is never blamed on a load from guard memory.
"""

from __future__ import annotations

import torch

# The guards' value lives with the kernel languages, which read it too; drill tests take it here.
from tutor.kernels.guard import guard_fill as guard_fill
from tutor.kernels.guard import guard_value

GUARD = 1 << 14  # elements of NaN on each side: more than any block's overhang past the end


def guarded(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A contiguous copy of `values` inside a buffer with NaN before and after it.

    Returns (tensor, buffer); keep `buffer.clone()` to check later that nothing wrote outside.
    """
    buffer = torch.full(
        (values.numel() + 2 * GUARD,), guard_value(), dtype=values.dtype, device=values.device
    )
    view = buffer[GUARD : GUARD + values.numel()].view(values.shape)
    view.copy_(values)
    return view, buffer


def row_sliced(values: torch.Tensor, slack: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """`values` as a view whose rows are `slack` elements longer in memory, the slack NaN.

    The view's row stride is N + slack, so a kernel that assumes stride N reads wrong rows, and
    one that loads past N without a mask reads NaN. The rows sit inside a NaN guard too, so
    the last row's overhang stays inside the allocation. Returns (view, the [..., N + slack]
    rows it was cut from).
    """
    view, rows, _ = _row_sliced_parts(values, slack)
    return view, rows


def row_sliced_buffer(values: torch.Tensor, slack: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """`row_sliced(values, slack)`, returning (view, the whole guarded buffer around it).

    For a kernel that writes the view in place: every element of the buffer outside the view
    (slack and guards) must still be NaN afterwards.
    """
    view, _, buffer = _row_sliced_parts(values, slack)
    return view, buffer


def _row_sliced_parts(values: torch.Tensor, slack: int):
    *lead, n = values.shape
    rows, buffer = guarded(
        torch.full((*lead, n + slack), guard_value(), dtype=values.dtype, device=values.device)
    )
    view = rows[..., :n]
    view.copy_(values)
    return view, rows, buffer


def padded_tail(n: int, block: int, shape: tuple[int, ...], device: str) -> torch.Tensor:
    """Bool mask over `shape` (last dim n) of the columns in the last, partly filled block."""
    first = (n // block) * block
    cols = torch.arange(n, device=device) >= first
    return cols.expand(shape)


def same_layout(values: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """`values` (in `dtype`) laid out with the same strides, inside a guarded buffer.

    For re-runs on fp32 copies: `x.float()` of a strided view is contiguous, so a kernel that
    mishandles strides would pass the re-run and the failure would read as bf16 arithmetic.
    """
    dtype = dtype or values.dtype
    if values.numel() == 0:
        return values.to(dtype)
    span = 1 + sum(
        (size - 1) * stride for size, stride in zip(values.shape, values.stride(), strict=True)
    )
    _, buffer = guarded(torch.full((span,), guard_value(), dtype=dtype, device=values.device))
    view = buffer[GUARD : GUARD + span].as_strided(values.shape, values.stride())
    view.copy_(values.to(dtype))
    return view
