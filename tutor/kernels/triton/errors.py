"""Triton's errors, named: what kind of error a learner's Triton code raised, and where.

The interpreter's limits (what it cannot run, though a GPU would), what Triton's compiler
refuses (a compile error, 16-bit math without an upcast), and what any Python host code can do
wrong (tutor.kernels.errors) each become a KernelFailure with a diagnosis id and the line of the
learner's file.
"""

from __future__ import annotations

import re
from pathlib import Path

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.kernels.errors import (
    chain,
    deepest_line,
    excerpt,
    first_line,
    gpu_fault,
    not_written,
    python_error,
    where_in,
)
from tutor.kernels.triton import interpreter
from tutor.lang.i18n import N_, _


def classify(exc: BaseException, name: str, path: Path) -> KernelFailure:
    """Name what kind of error the learner's code raised, and where."""
    root = _root_cause(exc)
    line = deepest_line(exc, path)
    where = where_in(path, line)
    kind = type(root).__name__
    limit = interpreter.is_limit(exc)
    if limit is not None:
        # Checked before NotImplementedError: the interpreter raises it for what it lacks.
        return KernelFailure(
            dx.INTERPRETER_LIMIT,
            _(
                "{where}: the CPU interpreter cannot run {limit}; your code may be right: "
                "it runs on a GPU"
            ).format(where=where, limit=limit),
            excerpt(path, line),
            line=line,
        )
    if isinstance(root, interpreter.GlobalReadError):
        # What the GPU's compiler refuses, refused on the CPU too, at the line that reads it.
        kernel_line = root.lineno if root.file == str(path.resolve()) else line
        return KernelFailure(
            dx.TRITON_COMPILE_ERROR,
            _(_COMPILE_ERROR).format(where=where_in(path, kernel_line), error=root),
            excerpt(path, kernel_line),
            line=kernel_line,
        )
    chain_text = "\n".join(str(e) for e in chain(exc))
    removed = _BLOCK_POINTERS.search(chain_text)
    if removed:
        # Triton 3.9 removed block pointers, which older tutorials still teach: named, with
        # the tensor-descriptor rewrite in the hints, at the line that uses them.
        kernel_line = (_compile_error_line(root, path) if _is_compile_error(root) else None) or line
        api = f"tl.{removed.group('attr') or 'make_block_ptr'}"
        return KernelFailure(
            dx.BLOCK_POINTERS,
            _(
                "{where}: {api} no longer exists: Triton {version} removed block pointers for "
                "tensor descriptors"
            ).format(where=where_in(path, kernel_line), api=api, version=_version()),
            excerpt(path, kernel_line),
            line=kernel_line,
        )
    if isinstance(root, NotImplementedError) and interpreter.raised_in(root):
        # Triton itself refuses the feature (tl.make_block_ptr in 3.9): a GPU's compiler
        # reports it as a compile error, so the interpreter's run does too.
        return KernelFailure(
            dx.TRITON_COMPILE_ERROR,
            _(_COMPILE_ERROR).format(where=where, error=root),
            excerpt(path, line),
            line=line,
        )
    if isinstance(root, NotImplementedError):
        return not_written(name, root, path, line)
    kernel_line = (_compile_error_line(root, path) if _is_compile_error(root) else None) or line
    half = _HALF_MATH.search(chain_text)
    half_dispatch = _half_precision_dispatch(exc)
    if half or half_dispatch:
        # Triton refuses exp/sqrt/sigmoid on 16-bit floats, libdevice has no 16-bit versions,
        # and older interpreters cannot do bf16 arithmetic at all: the missing upcast after a
        # load, named as such (the same code refuses it on a GPU).
        said = (
            half.group(0)
            if half
            else _("a libdevice function got {dtype} values").format(dtype=half_dispatch)
        )
        return KernelFailure(
            dx.BF16_NO_UPCAST,
            _("{where}: math on 16-bit float values: {said}").format(
                where=where_in(path, kernel_line), said=said
            ),
            _(
                "Triton's math functions (exp, sqrt, sigmoid, libdevice's tanh, ...) accept only "
                "fp32 and fp64 values."
            ),
            line=kernel_line,
        )
    if _is_compile_error(root):
        text = _compile_error_text(root)
        return KernelFailure(
            dx.TRITON_COMPILE_ERROR,
            _(_COMPILE_ERROR).format(where=where_in(path, kernel_line), error=text),
            excerpt(path, kernel_line),
            line=kernel_line,
        )
    fault = gpu_fault(name, root, line)
    if fault is not None:
        return fault
    if _is_interpreter_error(exc) and line is not None:
        # The interpreter runs the kernel as Python, so its errors point at the kernel's line.
        return KernelFailure(
            dx.TRITON_COMPILE_ERROR,
            _("{where}: the kernel failed in Triton's interpreter: {kind}: {error}").format(
                where=where, kind=kind, error=first_line(root)
            ),
            excerpt(path, line),
            line=line,
        )
    return python_error(name, root, path, line)


# One message for every way Triton refuses a kernel, so it is translated once.
_COMPILE_ERROR = N_("{where}: Triton could not compile the kernel: {error}")

# How Triton says a block pointer API is gone: make_block_ptr raises this, and tl.advance (no
# longer in triton.language) an AttributeError.
_BLOCK_POINTERS = re.compile(
    r"Block pointers have been removed|"
    r"has no attribute '(?P<attr>make_block_ptr|advance)'"
)


def _version() -> str:
    import triton

    return triton.__version__


_HALF_MATH = re.compile(r"Expected dtype \[.*\] but got (bf16|fp16)|has no attribute 'get_bf16'")
_HALF_FLOATS = ("bf16", "fp16")


def _half_precision_dispatch(exc: BaseException) -> str | None:
    """The 16-bit float dtype ("bf16") a libdevice call found no version for, else None.

    `tl.core.extern_elementwise` looks the argument dtypes up in the function's table
    (fp32 and fp64 only): bf16 arguments raise KeyError((bf16,)). The interpreter and the
    GPU's compiler run the same lookup (the compiler's CompilationError is raised from it),
    and both read it as a compile error before.
    """
    for error in chain(exc):
        if not isinstance(error, KeyError) or not error.args:
            continue
        try:
            dtypes = list(error.args[0])  # a tuple of tl.dtype (triton's own tuple class)
        except TypeError:
            continue
        half = [d.name for d in dtypes if getattr(d, "name", None) in _HALF_FLOATS]
        if half:
            return half[0]
    return None


def _compile_error_text(exc: BaseException) -> str:
    """What Triton objected to: its message, else the error underneath, else the last line."""
    message = getattr(exc, "error_message", None)
    if message:
        return str(message).strip()
    for inner in chain(exc)[1:]:
        if str(inner).strip():
            return f"{type(inner).__name__}: {str(inner).strip().splitlines()[-1]}"
    lines = [ln for ln in str(exc).splitlines() if ln.strip() and ln.strip() != "^"]
    return lines[-1].strip() if lines else type(exc).__name__


def _root_cause(exc: BaseException) -> BaseException:
    while exc.__cause__ is not None and _is_interpreter_error(exc):
        exc = exc.__cause__
    return exc


def _is_interpreter_error(exc: BaseException) -> bool:
    return type(exc).__name__ == "InterpreterError"


def _is_compile_error(exc: BaseException) -> bool:
    return any(cls.__name__ == "CompilationError" for cls in type(exc).__mro__)


def _compile_error_line(exc: BaseException, path: Path) -> int | None:
    """Map a CompilationError's line (relative to the kernel's `def`) to a line of the file."""
    src, node = getattr(exc, "src", None), getattr(exc, "node", None)
    if not src or not hasattr(node, "lineno"):
        return None
    def_line = src.splitlines()[0].strip()
    match = re.match(r"def\s+\w+", def_line)
    if not match:
        return None
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if text.strip().startswith(match.group(0)):
            return number + node.lineno - 1
    return None
