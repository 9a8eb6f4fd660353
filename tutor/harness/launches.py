"""Count Triton kernel launches and the programs they ask for, as evidence for diagnoses.

A result computed with torch alone launches nothing (`torch-fallback`); a grid that rounds down
to nothing launches a kernel of zero programs (`grid-too-small`, even when no output value was
written at all). Both the compiled path (`JITFunction.run`) and the interpreter
(`InterpretedFunction.run`) go through a `run` method when a kernel is launched with
`kernel[grid](...)`; wrapping the class attribute sees every launch, autotuned ones included.
"""

from __future__ import annotations

import functools
import math
from typing import Any

_count = 0
_programs = 0  # programs asked for by all launches so far (unknown grids count as one)
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
            global _count, _programs
            if not kwargs.get("warmup", False):
                _count += 1
                _programs += _grid_size(kwargs.get("grid"), kwargs)
            return _original(self, *args, **kwargs)

        cls.run = counted
    _installed = True


def _grid_size(grid: Any, meta: dict[str, Any]) -> int:
    """Programs a launch asks for; 1 when the grid cannot be read (never blame an unknown)."""
    try:
        shape = grid(meta) if callable(grid) else grid
        if isinstance(shape, int):
            return max(shape, 0)
        return math.prod(max(int(d), 0) for d in shape)
    except Exception:  # noqa: BLE001 - evidence only: an odd grid is Triton's to reject
        return 1


def count() -> int:
    """Launches so far in this process."""
    return _count


def programs() -> int:
    """Programs asked for by every launch so far in this process."""
    return _programs
