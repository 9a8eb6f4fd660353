"""Load the learner's file and call its functions under observation.

Loading problems (no file, a syntax error, an exception at import, a function missing) and errors
while a function runs (NotImplementedError from a starter, a Triton compile error, a Python error,
a CUDA fault) become `DrillFailure`s with a diagnosis and, where it can be found, the line of the
learner's file. A call that launches no Triton kernel, or that calls one of the drill's core
torch operations (drills.yaml's `torch_core`), is named too (`torch-fallback`).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import torch

from tutor import diagnoses as dx
from tutor.harness import interpreter, launches
from tutor.harness.allocations import GuardedAllocations
from tutor.harness.failures import DrillFailure, HarnessFailure
from tutor.harness.inputs import same_layout
from tutor.harness.torch_calls import CoreCalls
from tutor.i18n import N_, _


def load(path: Path, functions: tuple[str, ...], torch_core: tuple[str, ...] = ()) -> Learner:
    """Import `path` as a fresh module and check it defines `functions`.

    `torch_core`: the torch operations that do the drill's work (drills.yaml); a call to one
    while a function runs is `torch-fallback`.
    """
    if not path.is_file():
        raise HarnessFailure(dx.MISSING_FILE, _("{path} does not exist").format(path=path))
    launches.install()
    name = f"learner_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HarnessFailure(
            dx.IMPORT_ERROR,
            _("{file} is not a Python file: the file under test must end in .py").format(
                file=path.name
            ),
        )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise HarnessFailure(
            dx.SYNTAX_ERROR,
            _("{where}: syntax error: {error}").format(
                where=_where(path, exc.lineno), error=exc.msg
            ),
            (exc.text or "").rstrip(),
            line=exc.lineno,
        ) from None
    except SystemExit as exc:
        line = deepest_line(exc, path)
        raise HarnessFailure(
            dx.IMPORT_ERROR,
            _(
                "{where}: importing the file called sys.exit({code}), which would end the "
                "tests; keep only definitions at the top level"
            ).format(where=_where(path, line), code=repr(exc.code)),
            line=line,
        ) from None
    except Exception as exc:  # noqa: BLE001 - any error at import is the learner's to see
        line = deepest_line(exc, path)
        raise HarnessFailure(
            dx.IMPORT_ERROR,
            _("{where}: importing the file raised {kind}: {error}").format(
                where=_where(path, line), kind=type(exc).__name__, error=exc
            ),
            line=line,
        ) from None
    missing = [f for f in functions if not callable(getattr(module, f, None))]
    if missing:
        raise HarnessFailure(
            dx.MISSING_FUNCTION,
            _("{file} does not define {names}").format(file=path.name, names=", ".join(missing)),
            _(
                "The tests call these functions by name; keep the names and signatures of the "
                "starter."
            ),
        )
    return Learner(module, path, torch_core)


class Learner:
    """The learner's module; attribute access gives its functions wrapped by `observed`."""

    def __init__(self, module: ModuleType, path: Path, torch_core: tuple[str, ...] = ()) -> None:
        self.module = module
        self.path = path
        self.torch_core = torch_core

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return observed(getattr(self.module, name), name, self.path, self.torch_core)


@dataclass(frozen=True)
class CallRecord:
    """What one observed call did: evidence for the checks of its output.

    - programs: the programs its launches asked for (0 when its grids rounded down to nothing;
      None before any call);
    - launches: their grids and blocks, evidence for and against grid-too-small;
    - sentinel_storages: the storages it made with torch.empty and kin, filled with the
      sentinel (tutor.harness.allocations): an output among them that holds none was written;
    - copied_inputs: it copied a float input, fenced with the inputs' guard.
    """

    programs: int | None
    launches: tuple[launches.Launch, ...]
    sentinel_storages: frozenset[int]
    copied_inputs: bool = False


# The last observed call, for an output it wrote into a tensor it was given.
last_call = CallRecord(None, (), frozenset())


# The tensors observed calls returned, by storage, with the record of the call that made each.
# A test that calls the learner's function again on another input (a probe) before it judges
# the first output must still judge that output by its own call (call_behind).
_returned: dict[int, tuple[weakref.ref, CallRecord]] = {}


def call_behind(tensor: torch.Tensor) -> CallRecord:
    """The record of the observed call that returned `tensor` (or a tensor sharing its
    storage, still alive); else the last observed call's, as for an output passed in."""
    found = _returned.get(tensor.untyped_storage().data_ptr())
    if found is not None and found[0]() is not None:
        return found[1]
    return last_call


def started_as_sentinel(tensor: torch.Tensor) -> bool:
    """Whether `tensor` is (a view of) memory that the call which returned it (else the last
    call) made with torch.empty or kin."""
    return tensor.untyped_storage().data_ptr() in call_behind(tensor).sentinel_storages


def _remember_returned(result: Any, record: CallRecord) -> None:
    """Keep `record` for each tensor in `result` (a tensor, or a tuple or list of them), and
    forget the tensors that are gone."""
    for key in [key for key, (ref, _record) in _returned.items() if ref() is None]:
        del _returned[key]
    outputs = result if isinstance(result, (tuple, list)) else (result,)
    for out in outputs:
        if isinstance(out, torch.Tensor):
            _returned[out.untyped_storage().data_ptr()] = (weakref.ref(out), record)


def observed(
    fn: Callable[..., Any], name: str, path: Path, torch_core: tuple[str, ...] = ()
) -> Callable[..., Any]:
    """`fn` that turns errors into diagnoses and insists that Triton does the work: at least
    one launch, and no call to one of the drill's `torch_core` operations."""

    def call(*args: Any, **kwargs: Any) -> Any:
        global last_call
        before, programs_before = launches.count(), launches.programs()
        try:
            # The fence first, so that the core calls seen are the learner's, not its copies.
            with GuardedAllocations() as allocations, CoreCalls(torch_core) as core_calls:
                result = fn(*args, **kwargs)
        except DrillFailure:
            raise
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - every learner error is reported
            failure = classify(exc, name, path)
            if failure.diagnosis == dx.INTERPRETER_LIMIT:
                failure = _limit_of_half_values(fn, args, kwargs, failure, path) or failure
            failure.error = exc  # the learner's own exception, for call_or_refuse
            raise failure from None
        allocations.check(name)
        last_call = CallRecord(
            launches.programs() - programs_before,
            tuple(launches.since(before)),
            allocations.started_as_sentinel(),
            allocations.copied_inputs,
        )
        _remember_returned(result, last_call)
        if launches.count() == before:
            raise HarnessFailure(
                dx.TORCH_FALLBACK,
                _("{name} returned without launching a Triton kernel").format(name=name),
                _("The drill is to compute the result in your @triton.jit kernel, not with torch."),
            )
        if core_calls.calls:
            raise HarnessFailure(
                dx.TORCH_FALLBACK,
                _("{name} launched a Triton kernel, but called {calls}").format(
                    name=name, calls=", ".join(core_calls.calls)
                ),
                _(
                    "That torch call does this drill's work, which is the kernel's to do: move it "
                    "into your @triton.jit kernel (allocating, views and copies in torch are fine)."
                ),
            )
        return result

    return call


def _limit_of_half_values(
    fn: Callable[..., Any], args: tuple, kwargs: dict, limit: DrillFailure, path: Path
) -> DrillFailure | None:
    """`bf16-no-upcast` when the interpreter stopped only because values were bf16 (or fp16).

    The evidence: the same call on fp32 copies of the 16-bit inputs (same strides) runs
    without error. A GPU runs the 16-bit arithmetic and its rounding shows in the values,
    which the tests name `bf16-no-upcast` too; on the CPU it was `interpreter-limit`.
    """
    half = [a for a in (*args, *kwargs.values()) if _is_half_tensor(a)]
    if not half:
        return None
    upcast = lambda a: same_layout(a, torch.float32) if _is_half_tensor(a) else a  # noqa: E731
    dtype = str(half[0].dtype).removeprefix("torch.")
    try:
        with GuardedAllocations():
            fn(*map(upcast, args), **{k: upcast(v) for k, v in kwargs.items()})
    except (Exception, SystemExit):  # noqa: BLE001 - no evidence: the limit stands
        return None
    return HarnessFailure(
        dx.BF16_NO_UPCAST,
        _("{where}: the CPU interpreter stopped in arithmetic on {dtype} values").format(
            where=_where(path, limit.line), dtype=dtype
        ),
        _(
            "The same call on fp32 copies of the inputs runs: the kernel computes on the {dtype} "
            "values it loaded, without converting them. Convert right after each tl.load "
            "(.to(tl.float32)), and back to the output's dtype only at the store."
        ).format(dtype=dtype),
        line=limit.line,
    )


def _is_half_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in (torch.bfloat16, torch.float16)


def call_or_refuse(impl: Learner, name: str, *args: Any, **kwargs: Any) -> bool:
    """Call `impl.<name>` on an input it may refuse; True when it refused it.

    Refusing means raising RuntimeError or ValueError before any kernel launch, as
    `x.view(-1, H)` does on a tensor it cannot flatten: a contract that allows either updating
    such a tensor or refusing it uses this. Any other error is diagnosed as `observed` does.
    """
    function = getattr(impl.module, name)
    before = launches.count()
    try:
        observed(function, name, impl.path, impl.torch_core)(*args, **kwargs)
    except DrillFailure as failure:
        refused = failure.diagnosis == dx.PYTHON_ERROR and isinstance(
            failure.error, RuntimeError | ValueError
        )
        if refused and launches.count() == before:
            return True
        raise
    return False


def classify(exc: BaseException, name: str, path: Path) -> DrillFailure:
    """Name what kind of error the learner's code raised, and where."""
    root = _root_cause(exc)
    line = deepest_line(exc, path)
    where = _where(path, line)
    kind = type(root).__name__
    limit = interpreter.is_limit(exc)
    if limit is not None:
        # Checked before NotImplementedError: the interpreter raises it for what it lacks.
        return HarnessFailure(
            dx.INTERPRETER_LIMIT,
            _(
                "{where}: the CPU interpreter cannot run {limit}; your code may be right: "
                "it runs on a GPU"
            ).format(where=where, limit=limit),
            _excerpt(path, line),
            line=line,
        )
    if isinstance(root, interpreter.GlobalReadError):
        # What the GPU's compiler refuses, refused on the CPU too, at the line that reads it.
        kernel_line = root.lineno if root.file == str(path.resolve()) else line
        return HarnessFailure(
            dx.TRITON_COMPILE_ERROR,
            _(_COMPILE_ERROR).format(where=_where(path, kernel_line), error=root),
            _excerpt(path, kernel_line),
            line=kernel_line,
        )
    if isinstance(root, NotImplementedError) and interpreter.raised_in(root):
        # Triton itself refuses the feature (tl.make_block_ptr in 3.9): a GPU's compiler
        # reports it as a compile error, so the interpreter's run does too.
        return HarnessFailure(
            dx.TRITON_COMPILE_ERROR,
            _(_COMPILE_ERROR).format(where=where, error=root),
            _excerpt(path, line),
            line=line,
        )
    if isinstance(root, NotImplementedError):
        return HarnessFailure(
            dx.NOT_WRITTEN,
            _("{name} is not written yet ({where}: {error})").format(
                name=name, where=where, error=root
            ),
            line=line,
        )
    kernel_line = (_compile_error_line(root, path) if _is_compile_error(root) else None) or line
    chain_text = "\n".join(str(e) for e in _chain(exc))
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
        return HarnessFailure(
            dx.BF16_NO_UPCAST,
            _("{where}: math on 16-bit float values: {said}").format(
                where=_where(path, kernel_line), said=said
            ),
            _(
                "Triton's math functions (exp, sqrt, sigmoid, libdevice's tanh, ...) accept only "
                "fp32 and fp64 values."
            ),
            line=kernel_line,
        )
    if _is_compile_error(root):
        text = _compile_error_text(root)
        return HarnessFailure(
            dx.TRITON_COMPILE_ERROR,
            _(_COMPILE_ERROR).format(where=_where(path, kernel_line), error=text),
            _excerpt(path, kernel_line),
            line=kernel_line,
        )
    message = str(root).strip().splitlines()[0] if str(root).strip() else ""
    if "CUDA error" in message or "illegal memory access" in message or kind == "AcceleratorError":
        return HarnessFailure(
            dx.CUDA_ERROR,
            _("{name} crashed on the GPU: {error}").format(name=name, error=message),
            _(
                "An illegal address usually means a load or store without a mask, or a wrong "
                "stride."
            ),
            line=line,
        )
    if _is_interpreter_error(exc) and line is not None:
        # The interpreter runs the kernel as Python, so its errors point at the kernel's line.
        return HarnessFailure(
            dx.TRITON_COMPILE_ERROR,
            _("{where}: the kernel failed in Triton's interpreter: {kind}: {error}").format(
                where=where, kind=kind, error=message
            ),
            _excerpt(path, line),
            line=line,
        )
    return HarnessFailure(
        dx.PYTHON_ERROR,
        _("{where}: {name} raised {kind}: {error}").format(
            where=where, name=name, kind=kind, error=message
        ),
        _excerpt(path, line),
        line=line,
    )


# One message for every way Triton refuses a kernel, so it is translated once.
_COMPILE_ERROR = N_("{where}: Triton could not compile the kernel: {error}")

_HALF_MATH = re.compile(r"Expected dtype \[.*\] but got (bf16|fp16)|has no attribute 'get_bf16'")
_HALF_FLOATS = ("bf16", "fp16")


def _half_precision_dispatch(exc: BaseException) -> str | None:
    """The 16-bit float dtype ("bf16") a libdevice call found no version for, else None.

    `tl.core.extern_elementwise` looks the argument dtypes up in the function's table
    (fp32 and fp64 only): bf16 arguments raise KeyError((bf16,)). The interpreter and the
    GPU's compiler run the same lookup (the compiler's CompilationError is raised from it),
    and both read it as a compile error before.
    """
    for error in _chain(exc):
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


def deepest_line(exc: BaseException, path: Path) -> int | None:
    """The innermost line of `path` in the tracebacks of `exc` and the errors it wraps."""
    target = str(path.resolve())
    found = None
    for error in _chain(exc):
        for frame in _frames(error.__traceback__):
            if str(Path(frame.filename).resolve()) == target:
                found = frame.lineno
    return found


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and every error it was raised from or while handling."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _compile_error_text(exc: BaseException) -> str:
    """What Triton objected to: its message, else the error underneath, else the last line."""
    message = getattr(exc, "error_message", None)
    if message:
        return str(message).strip()
    for inner in _chain(exc)[1:]:
        if str(inner).strip():
            return f"{type(inner).__name__}: {str(inner).strip().splitlines()[-1]}"
    lines = [ln for ln in str(exc).splitlines() if ln.strip() and ln.strip() != "^"]
    return lines[-1].strip() if lines else type(exc).__name__


def _frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(tb)) if tb is not None else []


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


def _where(path: Path, line: int | None) -> str:
    """`file.py:12`, or `file.py` when the line is not known."""
    return f"{path.name}:{line}" if line else path.name


def _excerpt(path: Path, line: int | None) -> str:
    if not line:
        return ""
    try:
        text = path.read_text().splitlines()[line - 1]
    except (OSError, IndexError):
        return ""
    return f"    {line} | {text.strip()}"
