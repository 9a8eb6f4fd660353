"""Count Triton kernel launches and the programs they ask for, as evidence for diagnoses.

A result computed with torch alone launches nothing (`torch-fallback`); a grid that rounds down
to nothing launches a kernel of zero programs (`grid-too-small`, even when no output value was
written at all). Both the compiled path (`JITFunction.run`) and the interpreter
(`InterpretedFunction.run`) go through a `run` method when a kernel is launched with
`kernel[grid](...)`; wrapping the class attribute sees every launch, autotuned ones included.

Each launch is also kept as a `Launch`: its grid and the power-of-two block sizes among its
constexpr arguments. A claim that the grid stopped short at some index needs a grid axis (or a
factor of a 1-D grid) times one of those blocks to land exactly there (tutor.harness.checks).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

_count = 0
_programs = 0  # programs asked for by all launches so far (unknown grids count as one)
_installed = False


@dataclass(frozen=True)
class Launch:
    """One kernel launch as evidence: its grid (None when it cannot be read) and the
    power-of-two integers among its constexpr arguments (the candidates for its blocks)."""

    grid: tuple[int, ...] | None
    blocks: tuple[int, ...]


RECENT = 256  # launches kept: more than any one call of a drill function makes
_recent: deque[tuple[int, Launch]] = deque(maxlen=RECENT)  # (its count, the launch)


def install() -> None:
    """Wrap the launch methods once; call after the backend is chosen."""
    global _installed
    if _installed:
        return
    from triton.runtime.jit import JITFunction

    classes = [JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:  # pragma: no cover - every supported triton has it
        pass
    for cls in classes:
        original = cls.run

        @functools.wraps(original)
        def counted(self, *args, _original=original, **kwargs):
            global _count, _programs
            if not kwargs.get("warmup", False):
                _count += 1
                shape = _grid_shape(kwargs.get("grid"), kwargs)
                _programs += 1 if shape is None else math.prod(shape)
                _recent.append((_count, Launch(shape, _block_sizes(self, args, kwargs))))
            return _original(self, *args, **kwargs)

        cls.run = counted
    _installed = True


def _grid_shape(grid: Any, meta: dict[str, Any]) -> tuple[int, ...] | None:
    """The programs a launch asks for along each axis; None when the grid cannot be read
    (counted as one program: never blame an unknown)."""
    try:
        shape = grid(meta) if callable(grid) else grid
        if isinstance(shape, int):
            return (max(shape, 0),)
        return tuple(max(int(d), 0) for d in shape)
    except Exception:  # noqa: BLE001 - evidence only: an odd grid is Triton's to reject
        return None


@functools.lru_cache(maxsize=512)
def _constexpr_names(fn: Any) -> tuple[tuple[int, str], ...]:
    """(position, name) of a kernel's constexpr parameters, annotations read as text (a
    learner's file may have `from __future__ import annotations`)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple((i, p.name) for i, p in enumerate(params) if "constexpr" in str(p.annotation))


def _block_sizes(kernel: Any, args: tuple, kwargs: dict[str, Any]) -> tuple[int, ...]:
    """The powers of two (2 or more) among a launch's constexpr arguments."""
    fn = getattr(kernel, "fn", None)
    if fn is None:
        return ()
    found = []
    for position, name in _constexpr_names(fn):
        value = args[position] if position < len(args) else kwargs.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 2:
            if value & (value - 1) == 0:
                found.append(value)
    return tuple(found)


def count() -> int:
    """Launches so far in this process."""
    return _count


def since(mark: int) -> list[Launch]:
    """The launches after the `mark`-th (a `count()` taken before them), oldest first."""
    return [launch for number, launch in _recent if number > mark]


def programs() -> int:
    """Programs asked for by every launch so far in this process."""
    return _programs
