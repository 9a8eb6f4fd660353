"""Triton's launches, recorded in the launch log (tutor.kernels.launches).

Both the compiled path (`JITFunction.run`) and the interpreter (`InterpretedFunction.run`) go
through a `run` method when a kernel is launched with `kernel[grid](...)`; wrapping the class
attribute sees every launch, autotuned ones included. A launch's blocks are the powers of two
among its constexpr arguments.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from tutor.kernels.launches import Launch, record

_installed = False


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
            if not kwargs.get("warmup", False):
                shape = _grid_shape(kwargs.get("grid"), kwargs)
                record(Launch(shape, _block_sizes(self, args, kwargs)))
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
