"""What any learner code can raise, named: the kinds of error every kernel language shares.

A language's `classify` (tutor.kernels.<name>) first names what is its own (a compile error, an
interpreter's limit), then hands the rest here: a function not written yet, a fault on the
GPU, any other Python error, each with the line of the learner's file where it happened.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from types import TracebackType

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.lang.i18n import _


def not_written(name: str, root: BaseException, path: Path, line: int | None) -> KernelFailure:
    """The starter's NotImplementedError: the learner has not written `name` yet."""
    return KernelFailure(
        dx.NOT_WRITTEN,
        _("{name} is not written yet ({where}: {error})").format(
            name=name, where=where_in(path, line), error=root
        ),
        line=line,
    )


def gpu_fault(name: str, root: BaseException, line: int | None) -> KernelFailure | None:
    """A kernel that faulted on the GPU (an illegal address), else None."""
    message = first_line(root)
    kind = type(root).__name__
    if "CUDA error" in message or "illegal memory access" in message or kind == "AcceleratorError":
        return KernelFailure(
            dx.CUDA_ERROR,
            _("{name} crashed on the GPU: {error}").format(name=name, error=message),
            _(
                "An illegal address usually means a load or store without a mask, or a wrong "
                "stride."
            ),
            line=line,
        )
    return None


def python_error(name: str, root: BaseException, path: Path, line: int | None) -> KernelFailure:
    """Any other error of the learner's code, with its kind, message and line."""
    return KernelFailure(
        dx.PYTHON_ERROR,
        _("{where}: {name} raised {kind}: {error}").format(
            where=where_in(path, line), name=name, kind=type(root).__name__, error=first_line(root)
        ),
        excerpt(path, line),
        line=line,
    )


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def deepest_line(exc: BaseException, path: Path) -> int | None:
    """The innermost line of `path` in the tracebacks of `exc` and the errors it wraps."""
    target = str(path.resolve())
    found = None
    for error in chain(exc):
        for frame in _frames(error.__traceback__):
            if str(Path(frame.filename).resolve()) == target:
                found = frame.lineno
    return found


def chain(exc: BaseException) -> list[BaseException]:
    """`exc` and every error it was raised from or while handling."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(tb)) if tb is not None else []


def where_in(path: Path, line: int | None) -> str:
    """`file.py:12`, or `file.py` when the line is not known."""
    return f"{path.name}:{line}" if line else path.name


def excerpt(path: Path, line: int | None) -> str:
    if not line:
        return ""
    try:
        text = path.read_text().splitlines()[line - 1]
    except (OSError, IndexError):
        return ""
    return f"    {line} | {text.strip()}"
