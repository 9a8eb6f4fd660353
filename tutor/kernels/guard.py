"""What the memory around a test's inputs holds: NaN, or what `guard_fill` says for a while.

The harness surrounds inputs with it (tutor.harness.inputs), and a kernel language that runs
kernels on the CPU in its own way reads it for a load past an input's end (Triton's
interpreter, tutor.kernels.triton.interpreter), so that load sees what the GPU would.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_guard_value = [float("nan")]


@contextmanager
def guard_fill(value: float) -> Iterator[None]:
    """Inputs made inside this block have guards (and slack) of `value` instead of NaN."""
    _guard_value.append(value)
    try:
        yield
    finally:
        _guard_value.pop()


def guard_value() -> float:
    """What guard memory holds now: NaN, or the value of the innermost `guard_fill`."""
    return _guard_value[-1]
