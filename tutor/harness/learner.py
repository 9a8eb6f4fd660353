"""Load the learner's file and call its functions under observation.

Loading problems (no file, a syntax error, an exception at import, a function missing) and errors
while a function runs (NotImplementedError from a starter, a compile error, a Python error,
a CUDA fault) become `DrillFailure`s with a diagnosis and, where it can be found, the line of the
learner's file. A call that launches no kernel, or that calls one of the drill's core
torch operations (drills.yaml's `torch_core`), is named too (`torch-fallback`).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from tutor import kernels
from tutor.course import diagnoses as dx
from tutor.harness.allocations import GuardedAllocations
from tutor.harness.failures import DrillFailure, HarnessFailure
from tutor.harness.inputs import same_layout
from tutor.harness.torch_calls import COPIES, CoreCalls
from tutor.kernels import launches
from tutor.kernels.base import KernelFailure
from tutor.kernels.errors import where_in
from tutor.lang.i18n import _


def load(
    path: Path,
    functions: tuple[str, ...],
    torch_core: tuple[str, ...] = (),
    host: Path | None = None,
) -> Learner:
    """Load `path` in the drill's kernel language as a fresh module and check it defines
    `functions`.

    `torch_core`: the torch operations that do the drill's work (drills.yaml); a call to one
    while a function runs is `torch-fallback`. `host`: the drill's host code, for a language
    whose learner files hold only kernels (CUDA C++).
    """
    if not path.is_file():
        raise HarnessFailure(dx.MISSING_FILE, _("{path} does not exist").format(path=path))
    language = kernels.current()
    language.install_launch_hooks()
    try:
        module = language.load(path, f"learner_{abs(hash(str(path)))}", host)
    except KernelFailure as failure:
        raise _harness_failure(failure) from None
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


def blocks_launched(output: torch.Tensor, candidates: Sequence[int]) -> tuple[int, ...]:
    """The sizes among `candidates` (the blocks a learner may pick) that the launches of the
    call behind `output` were given (their power-of-two compile-time arguments), or all of
    `candidates` when they were given none of them: a story that names a block then names the
    learner's own, not the smallest that gives the same output."""
    given = {block for launch in call_behind(output).launches for block in launch.blocks}
    return tuple(block for block in candidates if block in given) or tuple(candidates)


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
    """`fn` that turns errors into diagnoses and insists that the kernels do the work: at least
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
            if failure.diagnosis == dx.BLOCK_POINTERS:
                failure.facts.update(_first_tensor(fn, args, kwargs))
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
                _("{name} returned without launching {kernel}").format(
                    name=name, kernel=_(kernels.current().kernel_noun)
                ),
                _("The drill is to compute the result in your kernel, not with torch."),
            )
        if core_calls.calls:
            raise HarnessFailure(
                dx.TORCH_FALLBACK,
                _("{name} launched {kernel}, but called {calls}").format(
                    name=name,
                    kernel=_(kernels.current().kernel_noun),
                    calls=", ".join(core_calls.calls),
                ),
                _(
                    "That torch call does this drill's work, which is the kernel's to do: move it "
                    "into your kernel ({fine})."
                ).format(fine=_fine_in_torch(core_calls.operations)),
                facts={"way": BESIDE_KERNEL},
            )
        return result

    return call


def _first_tensor(fn: Callable[..., Any], args: tuple, kwargs: dict) -> dict:
    """The name, shape and strides of the call's first tensor argument of the most dimensions
    (facts for a hint that rewrites the learner's kernel in the learner's own shapes)."""
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = {f"arg{i}": a for i, a in enumerate(args)}
    tensors = [(n, t) for n, t in bound.items() if isinstance(t, torch.Tensor) and t.dim()]
    if not tensors:
        return {}
    name, tensor = max(tensors, key=lambda found: found[1].dim())  # the first of the widest
    return {
        "tensor": name,
        "shape": "[" + ", ".join(str(d) for d in tensor.shape) + "]",
        "strides": str(tuple(tensor.stride())),
    }


# The way of torch-fallback where a kernel ran and torch did the drill's core op beside it (its
# ladder has stages of their own for it: tutor.course.hints).
BESIDE_KERNEL = "beside-kernel"


def _fine_in_torch(flagged: set[str]) -> str:
    """What the learner may still do in torch: never a copy when a copy is what was flagged
    (a transpose drill's core op is the copy)."""
    if flagged & COPIES:
        return _("allocating and views in torch are fine")
    return _("allocating, views and copies in torch are fine")


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
            where=where_in(path, limit.line), dtype=dtype
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


def classify(exc: BaseException, name: str, path: Path) -> HarnessFailure:
    """Name what kind of error a call of the learner's `name` raised, and where (the drill's
    kernel language knows its own errors: tutor.kernels)."""
    return _harness_failure(kernels.current().classify(exc, name, path))


def _harness_failure(failure: KernelFailure) -> HarnessFailure:
    return HarnessFailure(failure.diagnosis, failure.message, failure.details, line=failure.line)


def expect_clean(impl: Learner, name: str, *args: Any, **kwargs: Any) -> None:
    """Call `impl.<name>` again where races and out-of-bounds accesses are seen, whatever the
    backend: CUDA C++'s ThreadSanitizer and AddressSanitizer builds, on the CPU (a kernel
    language without them checks nothing more). The first one found fails the test, named
    (`missing-barrier`, `out-of-bounds`, ...) with the lines of the learner's file."""
    try:
        kernels.current().deep_check(impl.module, name, args, kwargs)
    except KernelFailure as failure:
        raise _harness_failure(failure) from None
