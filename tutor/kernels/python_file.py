"""Import a learner's Python file as a fresh module, its errors at import named with the line.

Every Python learner file (a Triton drill's kernels and wrapper) is loaded this way: a syntax
error, `sys.exit` or any exception while the file runs its top level becomes a KernelFailure
that names the file and the line, never a traceback.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.kernels.errors import deepest_line, where_in
from tutor.lang.i18n import _


def syntax_failure(path: Path) -> KernelFailure | None:
    """`path`'s syntax error, found by compiling it (nothing runs), else None; a file that
    cannot be read is left for the run to name."""
    try:
        source = path.read_bytes()
    except OSError:
        return None
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError too
        return _syntax(path, exc)
    except (ValueError, UnicodeDecodeError):  # NUL bytes, bad encodings: the run says it
        return None
    return None


def _syntax(path: Path, exc: SyntaxError) -> KernelFailure:
    return KernelFailure(
        dx.SYNTAX_ERROR,
        _("{where}: syntax error: {error}").format(where=where_in(path, exc.lineno), error=exc.msg),
        (exc.text or "").rstrip(),
        line=exc.lineno,
    )


def import_file(path: Path, module_name: str) -> ModuleType:
    """`path` imported as the module `module_name` (kept in sys.modules, so that pickling and
    dataclasses of the file find it)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise KernelFailure(
            dx.IMPORT_ERROR,
            _("{file} is not a Python file: the file under test must end in .py").format(
                file=path.name
            ),
        )
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise _syntax(path, exc) from None
    except SystemExit as exc:
        line = deepest_line(exc, path)
        raise KernelFailure(
            dx.IMPORT_ERROR,
            _(
                "{where}: importing the file called sys.exit({code}), which would end the "
                "tests; keep only definitions at the top level"
            ).format(where=where_in(path, line), code=repr(exc.code)),
            line=line,
        ) from None
    except Exception as exc:  # noqa: BLE001 - any error at import is the learner's to see
        line = deepest_line(exc, path)
        raise KernelFailure(
            dx.IMPORT_ERROR,
            _("{where}: importing the file raised {kind}: {error}").format(
                where=where_in(path, line), kind=type(exc).__name__, error=exc
            ),
            line=line,
        ) from None
    return module
