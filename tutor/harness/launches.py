"""Count Triton kernel launches, so a result computed with torch alone can be named as such.

Both the compiled path (`JITFunction.run`) and the interpreter (`InterpretedFunction.run`) go
through a `run` method when a kernel is launched with `kernel[grid](...)`; wrapping the class
attribute counts every launch, autotuned ones included.
"""

from __future__ import annotations

import functools

_count = 0
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
            global _count
            if not kwargs.get("warmup", False):
                _count += 1
            return _original(self, *args, **kwargs)

        cls.run = counted
    _installed = True


def count() -> int:
    """Launches so far in this process."""
    return _count
