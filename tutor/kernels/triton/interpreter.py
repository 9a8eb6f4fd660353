"""Make Triton's CPU interpreter run what real Triton code uses, the way the GPU runs it.

`backend.select` calls `install()` when it chooses the CPU (TRITON_INTERPRET=1), before any
learner file is imported. Each patch below names the interpreter behaviour it covers; each has
a test in tests/test_interpreter.py. They were written against triton 3.9's
`triton/runtime/interpreter.py`: on any other version `install()` warns (and the test
`test_triton_version_is_the_tested_one` fails) so that someone re-reads that file.

1. Float kernel arguments. The interpreter passes a Python float through as a float, so
   `eps.to(tl.float32)` (written on purpose in Liger-Kernel) raises "'float' object has no
   attribute 'to'". The GPU passes a float argument as an fp32 scalar: so does this patch.
2. libdevice. `triton.language.extra.libdevice.tanh` and friends are empty stubs that the GPU
   compiler replaces with the backend's function; the interpreter calls the stub and gets None.
   The CUDA functions (`triton.language.extra.cuda.libdevice`) end in
   `builder.create_extern_elementwise`, which the interpreter refuses (NotImplementedError).
   This patch sends each stub to its CUDA function and computes the CUDA symbol (`__nv_tanhf`)
   with numpy; a symbol without a numpy equivalent raises `InterpreterLimit`.
3. Builtins imported by name (`from triton.language.math import rsqrt`, `from
   triton.language.extra.cuda.libdevice import tanh`). The interpreter re-binds only the
   attributes of `tl`, `tl.core` and `tl.math` to its own semantics, so a name bound at import
   time raises "`_semantic` argument must be provided outside of JIT functions". This patch
   re-binds such names in the kernel's globals too, for the launch, as it does for `tl.*`.

4. Loop variables. The interpreter runs `for i in range(...)` and `tl.range(...)` as Python
   loops, so `i` is a Python int and `i.to(tl.int64)` raises "'int' object has no attribute
   'to'". On the GPU a loop variable is an int32 scalar (int64 when a bound is): so it is here,
   while a kernel runs (`tl.static_range` still gives Python ints, as it gives constants).
5. Plain globals. A kernel that reads a plain Python global is refused, as the compiler does.
6. bf16 `tl.dot`: both tiles go to fp32 first, as the GPU multiplies them.
7. Speed: one patch per function per launch. The interpreter re-binds every builtin of `tl`,
   `tl.core` and `tl.math` at each call of a jit helper (tl.sum, tl.max, the learner's own),
   dozens of times per program, and keeps what it bound until the launch ends: the bindings
   a function needs are in place after its first call of a launch, and later calls skip them.
8. Speed: the numpy dtype of a Triton type is looked up once per type (the interpreter builds
   a table of twenty dtypes for each lookup, a tenth of its time in loops of small blocks).
9. Speed: a block type's shape, size and name are worked out once per (element type, shape).
10. Speed: a tensor's shape and size (constexprs) are built once per type.
11. Speed: broadcasting two blocks of one shape (or two scalars) returns them as they are.
12. Speed: a binary operation on two tensors of one dtype skips the type promotion (it finds
   that dtype) and goes straight to broadcasting.
13. Speed: the int32 overflow check of `+`, `-`, `*` is skipped while `debug` is off: its
   `device_assert` is dropped then anyway, after computing the check in int64.
14. Speed: the builtins of tl, tl.core, tl.math and the tensor classes are listed once, at
   install, instead of by `inspect.getmembers` at every binding.
15. Speed: bf16 <-> fp32 conversions without a rounding mode are a 16-bit shift of the bits
   when no value is subnormal (the interpreter's general float converter gives the same bits
   there; subnormals still go through it, which normalises them in its own way).

What is left (bf16 kept as raw integers, fp32 -> bf16 truncation, ...) is listed in
docs/interpreter-limits.md; `InterpreterLimit` and `is_limit` let the harness say "the
interpreter cannot run this" instead of blaming the learner.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tutor.kernels.guard import guard_value
from tutor.lang.i18n import N_

TESTED_TRITON = ("3.9",)  # the triton versions whose interpreter these patches were read against

# Where the harness names a verdict that depends on the backend by nature.
BF16_ARITHMETIC_NOTE = N_(
    "This verdict depends on the backend: the CPU interpreter keeps bf16 values as raw 16-bit "
    "integers, so bf16 arithmetic without an upcast is garbage only here; on a GPU, which rounds "
    "each step to bf16, it may pass. Upcast after the load anyway: that is accurate everywhere."
)

_installed = False
skipped: list[str] = []  # patches whose target was not found in this triton


class InterpreterLimit(NotImplementedError):
    """Something Triton's CPU interpreter cannot run, although a GPU runs it."""


def installed() -> bool:
    """True once `install()` ran: kernels run in the patched CPU interpreter."""
    return _installed


def install() -> None:
    """Apply every patch (once). Call only with TRITON_INTERPRET=1, before kernels are defined."""
    global _installed
    if _installed:
        return
    import triton
    from triton.runtime import interpreter as interp

    version = triton.__version__
    if not version.startswith(TESTED_TRITON):
        warnings.warn(
            f"tutor.kernels.triton.interpreter was tested with triton "
            f"{', '.join(TESTED_TRITON)}, this is triton {version}: check its patches "
            "(tests/test_interpreter.py)",
            stacklevel=2,
        )
    for name, target, patch in (
        ("float arguments as fp32", "_implicit_cvt", _patch_float_arguments),
        ("libdevice through numpy", "InterpreterBuilder", _patch_extern_elementwise),
        ("name-imported builtins", "_patch_lang", _patch_globals_per_launch),
        ("loop variables as scalars", "GridExecutor", _patch_loop_variables),
        ("plain globals refused", "_patch_lang", _patch_global_reads),
        ("bf16 tl.dot on numbers", "InterpreterBuilder", _patch_bf16_dot),
        # Last: it wraps every patch of _patch_lang above.
        ("one patch per function per launch", "_patch_lang", _patch_once_per_launch),
        ("numpy dtypes looked up once", "_get_np_dtype", _patch_np_dtype_lookup),
        ("block types built once per shape", "interpreter_semantic", _patch_block_types),
        ("tensor shapes built once per type", "interpreter_semantic", _patch_tensor_shapes),
        ("same-shape broadcast returns", "interpreter_semantic", _patch_same_shape_broadcast),
        ("same-dtype operands skip promotion", "interpreter_semantic", _patch_same_dtype_operands),
        ("overflow checks only with debug", "interpreter_semantic", _patch_overflow_checks),
        ("builtins listed once", "_patch_builtin", _patch_builtin_listing),
        ("bf16 conversions by shifts", "_convert_float", _patch_bf16_conversions),
        ("memory only inside the launch's tensors", "GridExecutor", _patch_bounded_memory),
    ):
        if not hasattr(interp, target):
            skipped.append(name)
            warnings.warn(f"interpreter patch '{name}' skipped: no {target}", stacklevel=2)
            continue
        patch(interp)
    _installed = True


# 1. Float kernel arguments -------------------------------------------------------------------


def _patch_float_arguments(interp: Any) -> None:
    import numpy as np
    import triton.language as tl

    original = interp._implicit_cvt

    def implicit_cvt(arg: Any) -> Any:
        # The interpreter leaves floats as Python floats; the GPU passes them as fp32 scalars.
        if isinstance(arg, float):
            handle = interp.TensorHandle(np.array([arg], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        return original(arg)

    interp._implicit_cvt = implicit_cvt


# 2. libdevice --------------------------------------------------------------------------------


def _round_half_away(x: Any) -> Any:
    import numpy as np

    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _numpy_functions() -> dict[str, Callable[..., Any]]:
    """libdevice names (without `__nv_`, the fp32 `f` and `_rn`) and their numpy equivalents."""
    import numpy as np

    def vectorized(fn: Callable[[float], float]) -> Callable[[Any], Any]:
        return lambda x: np.vectorize(fn, otypes=[np.float64])(x)

    unary = {
        "abs": np.abs, "fabs": np.abs, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
        "rint": np.rint, "nearbyint": np.rint, "round": _round_half_away,
        "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1,
        "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
        "sqrt": np.sqrt, "fsqrt": np.sqrt, "dsqrt": np.sqrt, "cbrt": np.cbrt,
        "rsqrt": lambda x: 1.0 / np.sqrt(x), "frsqrt": lambda x: 1.0 / np.sqrt(x),
        "rcbrt": lambda x: 1.0 / np.cbrt(x), "frcp": lambda x: 1.0 / x, "drcp": lambda x: 1.0 / x,
        "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
        "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
        "sinpi": lambda x: np.sin(np.pi * x), "cospi": lambda x: np.cos(np.pi * x),
        "erf": vectorized(math.erf), "erfc": vectorized(math.erfc),
        "lgamma": vectorized(math.lgamma), "tgamma": vectorized(math.gamma),
        "isnan": np.isnan, "isnand": np.isnan, "isinf": np.isinf, "isinfd": np.isinf,
        "finite": np.isfinite, "isfinited": np.isfinite, "signbit": np.signbit,
        "signbitd": np.signbit, "saturate": lambda x: np.clip(x, 0.0, 1.0),
        "normcdf": vectorized(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0))),
    }  # fmt: skip
    for name in ("exp", "exp10", "log", "log2", "log10", "sin", "cos", "tan"):
        unary[f"fast_{name}"] = unary[name]  # the GPU's fast forms: a few ulp less accurate
    binary = {
        "pow": np.power, "fast_pow": np.power, "atan2": np.arctan2, "hypot": np.hypot,
        "rhypot": lambda x, y: 1.0 / np.hypot(x, y), "copysign": np.copysign,
        "fmod": np.fmod, "fdim": lambda x, y: np.maximum(x - y, 0.0),
        "nextafter": np.nextafter, "ldexp": np.ldexp, "scalbn": np.ldexp,
        "fadd": np.add, "dadd": np.add, "fsub": np.subtract, "dsub": np.subtract,
        "fmul": np.multiply, "dmul": np.multiply, "fdiv": np.divide, "ddiv": np.divide,
        "fast_fdivide": np.divide, "fmax": np.fmax, "fmin": np.fmin,
    }  # fmt: skip
    ternary = {"fma": lambda x, y, z: x.astype(np.float64) * y + z}
    return {**unary, **binary, **ternary}


def _libdevice_name(symbol: str, table: dict[str, Callable[..., Any]]) -> str | None:
    """`__nv_tanhf` -> "tanh", `__nv_fdiv_rn` -> "fdiv"; None if numpy has no equivalent."""
    name = symbol.removeprefix("__nv_")
    if name.endswith("_rn"):  # round to nearest: what numpy does
        name = name[: -len("_rn")]
    for candidate in (name, name[:-1] if name.endswith("f") else None):
        if candidate in table:
            return candidate
    return None


def _patch_extern_elementwise(interp: Any) -> None:
    import numpy as np

    table = _numpy_functions()

    def create_extern_elementwise(self, lib_name, lib_path, symbol, arg_list, ret_type, is_pure):
        # The interpreter raises NotImplementedError for every extern (libdevice) function.
        name = _libdevice_name(symbol, table)
        if name is None:
            raise InterpreterLimit(f"the libdevice function {symbol}")
        out_dtype = interp._get_np_dtype(ret_type)
        scalar = getattr(ret_type, "scalar", ret_type)
        with np.errstate(all="ignore"):  # inf and NaN come out as they do on the GPU
            values = table[name](*[a.data for a in arg_list])
        return interp.TensorHandle(np.asarray(values).astype(out_dtype), scalar)

    interp.InterpreterBuilder.create_extern_elementwise = create_extern_elementwise


# 3. Name-imported builtins and libdevice stubs ---------------------------------------------


class _Globals:
    """A module's globals dict seen as an object, so the interpreter's patch scope restores it."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        object.__setattr__(self, "_tutor_namespace", namespace)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._tutor_namespace[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._tutor_namespace[name] = value

    def __delattr__(self, name: str) -> None:
        del self._tutor_namespace[name]


GENERIC_LIBDEVICE = "triton.language.extra.libdevice"
CUDA_LIBDEVICE = "triton.language.extra.cuda.libdevice"


def _interpreted(member: Callable[..., Any], interp: Any) -> Callable[..., Any]:
    """A builtin called with the interpreter's semantics, as the interpreter binds `tl.*`."""

    def call(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("_semantic", None)
        return member(*args, **kwargs, _semantic=interp.interpreter_semantic)

    call.__name__ = getattr(member, "__name__", "builtin")
    return call


def _stub_target(name: str, interp: Any) -> Callable[..., Any]:
    """The CUDA libdevice function a generic libdevice stub stands for, interpreted."""
    import importlib

    cuda = importlib.import_module(CUDA_LIBDEVICE)
    member = getattr(cuda, name, None)
    if member is None:

        def missing(*args: Any, **kwargs: Any) -> Any:
            raise InterpreterLimit(f"libdevice.{name}")

        return missing
    return _interpreted(member, interp)


def _replacement(value: Any, interp: Any) -> Callable[..., Any] | None:
    """What a kernel's global `value` must become for the launch, or None to leave it."""
    import triton.language as tl

    if not callable(value) or isinstance(value, type):
        return None
    module = getattr(value, "__module__", "") or ""
    if module == GENERIC_LIBDEVICE and not tl.core.is_builtin(value):
        return _stub_target(value.__name__, interp)
    if tl.core.is_builtin(value):
        return _interpreted(value, interp)
    return None


def _patch_globals_per_launch(interp: Any) -> None:
    original = interp._patch_lang

    def patch_lang(fn: Any) -> Any:
        scope = original(fn)
        namespace = fn.__globals__
        view = _Globals(namespace)
        for name, value in list(namespace.items()):
            replacement = _replacement(value, interp)
            if replacement is not None:
                scope.set_attr(view, name, replacement)
        for module_name in (GENERIC_LIBDEVICE, CUDA_LIBDEVICE):
            module = sys.modules.get(module_name)
            if module is None:
                continue
            for name, replacement in _module_replacements(module, interp):
                scope.set_attr(module, name, replacement)
        return scope

    interp._patch_lang = patch_lang


# A libdevice module's replacements, worked out on its first launch: its functions never change,
# and going through its few hundred members at every launch (and at every call of a jit helper
# such as tl.sum's) took a tenth of a kernel's time in the interpreter. The first launch sees
# the module unpatched, so every member is found.
_replacements_of: dict[str, list[tuple[str, Callable[..., Any]]]] = {}


def _module_replacements(module: Any, interp: Any) -> list[tuple[str, Callable[..., Any]]]:
    known = _replacements_of.get(module.__name__)
    if known is None:
        known = []
        for name, value in list(vars(module).items()):
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            replacement = _replacement(value, interp)
            if replacement is not None:
                known.append((name, replacement))
        _replacements_of[module.__name__] = known
    return known


# 4. Loop variables --------------------------------------------------------------------------

_launches = 0  # kernels running now (a launch inside a launch is not possible, but be exact)
_INT32 = (-(2**31), 2**31 - 1)


def _bound(value: Any) -> tuple[int, bool]:
    """A loop bound as an int, and whether it is an int64 value (a wide loop variable)."""
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        value = value.value
    if isinstance(value, tl.tensor):
        return int(value.handle.data.squeeze()), value.dtype in (tl.int64, tl.uint64)
    return int(value), False


def scalar_range(arg1: Any, arg2: Any = None, step: Any = None, **options: Any) -> Any:
    """`range` / `tl.range` whose values are int32 (or int64) scalars, as on the GPU.

    Outside a launch it is Python's range. `options` (num_stages, loop_unroll_factor, ...)
    only tune the GPU's code.
    """
    start, end = (0, arg1) if arg2 is None else (arg1, arg2)
    bounds = [_bound(v) for v in (start, end, 1 if step is None else step)]
    python_range = range(*(b for b, _ in bounds))
    if _launches == 0:
        return python_range
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as interp

    wide = any(w for _, w in bounds) or not all(_INT32[0] <= b <= _INT32[1] for b, _ in bounds)
    dtype, np_dtype = (tl.int64, np.int64) if wide else (tl.int32, np.int32)
    return (
        tl.tensor(interp.TensorHandle(np.array([i], dtype=np_dtype), dtype), dtype)
        for i in python_range
    )


def _patch_loop_variables(interp: Any) -> None:
    import triton.language as tl

    original_call = interp.GridExecutor.__call__

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _launches
        _launches += 1
        try:
            return original_call(self, *args, **kwargs)
        finally:
            _launches -= 1

    interp.GridExecutor.__call__ = call
    original_patch_lang = interp._patch_lang

    def patch_lang(fn: Any) -> Any:
        scope = original_patch_lang(fn)
        namespace = fn.__globals__
        learners = not str(namespace.get("__name__", "")).startswith("triton.")
        if learners and "range" not in namespace:  # a `range` of the learner's own stays
            scope.set_attr(_Globals(namespace), "range", scalar_range)
        # Every _patch_lang (tl.sum's helpers too) binds tl.range anew: bind it after it.
        for lang in (tl, tl.core):
            scope.set_attr(lang, "range", scalar_range)
        return scope

    interp._patch_lang = patch_lang


# 5. Plain globals --------------------------------------------------------------------------
#
# Triton's compiler refuses a kernel that reads a plain Python global (`LOG2E = 1.44` at module
# level): "Cannot access global variable LOG2E from within @jit'ed function" (seen on an H200
# with triton 3.6; the rule is code_generator.global_lookup in 3.9 too). The interpreter runs
# the kernel as Python and reads it happily, so the same file passed on the CPU and failed on
# the GPU. Reading one is refused here before the launch, with the compiler's own words.


class GlobalReadError(NameError):
    """A kernel reads a global that the compiler would refuse; `file`:`lineno` is the read."""

    def __init__(self, message: str, file: str, lineno: int | None) -> None:
        super().__init__(message)
        self.file, self.lineno = file, lineno


def _allowed_global(value: Any) -> bool:
    """What code_generator.global_lookup lets a kernel read (triton 3.6 and 3.9)."""
    import types

    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    return (
        isinstance(
            value, (types.ModuleType, JITFunction, InterpretedFunction, tl.dtype, tl.constexpr)
        )
        or getattr(value, "__triton_builtin__", False)
        or getattr(value, "__triton_aggregate__", False)
        or getattr(value, "__module__", "").startswith("triton.language")
        or (isinstance(value, tuple) and hasattr(value, "_fields"))  # a namedtuple
    )


def _read_names(code: Any) -> frozenset[str]:
    """The names `code` (and the code nested in it) reads as globals.

    Only LOAD_GLOBAL / LOAD_NAME: `co_names` also holds attribute names, so `tile.T` (a
    transpose, which the compiler and the interpreter both run) read as a global `T` there,
    and the interpreter copies its own module's globals, a TypeVar `T` among them, into every
    kernel's module.
    """
    import dis

    if code in _names_read:
        return _names_read[code]
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in _GLOBAL_READS}
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _read_names(const)
    names = frozenset(names)
    _names_read[code] = names
    return names


_GLOBAL_READS = {"LOAD_GLOBAL", "LOAD_NAME"}
# A code object's global reads never change: read once (dis walks the bytecode, at every call
# of every jit helper of a kernel otherwise).
_names_read: dict[Any, frozenset[str]] = {}


def refused_global(fn: Any) -> tuple[str, Any] | None:
    """The first global `fn` reads that the compiler would refuse, as (name, value)."""
    if fn.__globals__.get("__name__", "").startswith("triton."):
        return None  # Triton's own jit functions (tl.max's combine, ...) are its business
    import builtins

    namespace = fn.__globals__
    for name in sorted(_read_names(fn.__code__)):
        if name not in namespace or hasattr(builtins, name):  # Python's names: the compiler's too
            continue
        value = namespace[name]
        if getattr(value, "__module__", "") == __name__:
            continue  # one of this module's own stand-ins (the loop variables' range)
        if not _allowed_global(value):
            return name, value
    return None


def _line_of(fn: Any, name: str) -> int | None:
    """The first line of `fn`'s source that mentions `name` as a word."""
    import inspect
    import re

    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    for offset, text in enumerate(lines[1:], start=1):  # past the def line
        if pattern.search(text.split("#")[0]):
            return first + offset
    return None


def _patch_global_reads(interp: Any) -> None:
    original = interp._patch_lang

    def patch_lang(fn: Any) -> Any:
        refused = refused_global(fn)
        if refused is not None:
            name, value = refused
            raise GlobalReadError(
                f"Cannot access global variable {name} from within @jit'ed function. Triton "
                f"kernels can only access global variables that are instantiated as constexpr "
                f"(`{name} = tl.constexpr({value!r})`), or pass it as an argument",
                str(Path(fn.__code__.co_filename).resolve()),
                _line_of(fn, name),
            )
        return original(fn)

    interp._patch_lang = patch_lang


# 6. bf16 tl.dot -----------------------------------------------------------------------------
#
# The interpreter keeps bf16 tiles as raw 16-bit integers and hands them to numpy.matmul as
# such: a bf16 tl.dot gives nonsense even in a correct kernel. Converting both tiles to fp32
# first is exact (every bf16 is an fp32) and is what the GPU computes: exact products summed in
# fp32. (Found writing drill m1; the drill tests carried this as a fixture before.)


def _patch_bf16_dot(interp: Any) -> None:
    import triton.language as tl

    original = interp.InterpreterBuilder.create_dot

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        if a.dtype.scalar == tl.bfloat16:
            a = self.cast_impl(a, tl.float32)
        if b.dtype.scalar == tl.bfloat16:
            b = self.cast_impl(b, tl.float32)
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    interp.InterpreterBuilder.create_dot = create_dot


# 7. One patch per function per launch ------------------------------------------------------
#
# `_patch_lang(fn)` binds the interpreter's builtins into `tl`, `tl.core`, `tl.math`, tensor and
# fn's globals (and the patches above add theirs). The launch calls it for the kernel, and
# undoes it when the launch ends; each call of a jit helper during the launch (tl.sum, tl.max,
# tl.cdiv, the learner's own) calls it again and never undoes it, so what it binds for a
# function stays bound until the launch ends. Binding it again for the same function finds
# the same names and binds the same things: only the first call of each function in a launch
# needs it. (It was a third of the interpreter's time in the drills' tests: each call lists the
# members of every module with inspect.getmembers.)

_patched: set[Any] | None = None  # the functions patched in the launch running now


def _patch_once_per_launch(interp: Any) -> None:
    original_patch_lang = interp._patch_lang
    original_call = interp.GridExecutor.__call__

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _patched
        outer, _patched = _patched, set()
        try:
            return original_call(self, *args, **kwargs)
        finally:
            _patched = outer

    def patch_lang(fn: Any) -> Any:
        if _patched is not None and fn in _patched:
            return interp._LangPatchScope()  # bound already, until the launch undoes it
        scope = original_patch_lang(fn)
        if _patched is not None:
            _patched.add(fn)
        return scope

    interp.GridExecutor.__call__ = call
    interp._patch_lang = patch_lang


# 8. numpy dtypes looked up once -------------------------------------------------------------
#
# `_get_np_dtype(tt_dtype)` builds its table of Triton -> numpy dtypes at every call (each
# operation of an interpreted kernel makes a few calls). A Triton type's name says all it is
# (`fp32`, `pointer<fp32>`, `<[128], fp32>`), and types compare and hash by their names.


def _patch_np_dtype_lookup(interp: Any) -> None:
    original = interp._get_np_dtype
    known: dict[Any, Any] = {}

    def get_np_dtype(tt_dtype: Any) -> Any:
        try:
            return known[tt_dtype]
        except KeyError:
            found = known[tt_dtype] = original(tt_dtype)
            return found
        except TypeError:  # not hashable: not a Triton type, the interpreter says what it is
            return original(tt_dtype)

    get_np_dtype.__wrapped__ = original
    interp._get_np_dtype = get_np_dtype


# 9.-13. Triton's type machinery, computed once ------------------------------------------------
#
# Each operation of an interpreted kernel goes through triton.language's front end as the
# compiler does: it builds block types, the tensor's shape as a tuple of constexprs, promotes
# and broadcasts the operands. That Python was most of a kernel's time in the interpreter (b2's
# solution: `broadcast_impl_value` a third, `block_type.__init__` an eighth). The patches
# below give the same objects (equal types, fresh shape tuples, the same tensors) and raise the
# same errors: anything they do not recognise goes to Triton's own code, which also builds the
# first of each kind (its checks run then: a shape that is not a power of 2 still raises).


def _scalar_types(core: Any) -> tuple[type, ...]:
    """The types of a block's elements and of a scalar tensor (their str() is their name)."""
    return (core.dtype, core.pointer_type)


def _int_shape(values: Any) -> tuple[int, ...] | None:
    """`values` as a tuple when every element is an int (not a bool, not a constexpr)."""
    for value in values:
        if type(value) is not int:
            return None
    return tuple(values)


def _patch_block_types(interp: Any) -> None:
    import triton.language as tl

    core = tl.core
    original = core.block_type.__init__
    elements = _scalar_types(core)
    shapes = (list, core.tuple)  # what Triton's asserts: a Python tuple is refused, known or not
    # (element type's name, shape) -> the shape's values and tuple type, numel, name
    known: dict[tuple[str, tuple[int, ...]], tuple[list[int], Any, int, str]] = {}

    def block_type_init(self: Any, element_ty: Any, shape: Any) -> None:
        kind = type(shape)
        if type(element_ty) not in elements or kind not in shapes:
            return original(self, element_ty, shape)
        ints = _int_shape(shape.values if kind is core.tuple else shape)
        if ints is None:
            return original(self, element_ty, shape)
        key = (element_ty.name, ints)
        found = known.get(key)
        if found is None:
            original(self, element_ty, shape)  # Triton's checks, the first time
            known[key] = (list(self.shape.values), self.shape.type, self.numel, self.name)
            return None
        values, tuple_type, numel, name = found
        self.element_ty = element_ty
        self.shape = core.tuple(values, tuple_type)  # a fresh tuple, as Triton makes
        self.numel = numel
        self.name = name
        return None

    block_type_init.__wrapped__ = original
    core.block_type.__init__ = block_type_init


builtins_type = type  # `type` is a parameter's name in tensor_init (Triton's name for it)


def _patch_tensor_shapes(interp: Any) -> None:
    import triton.language as tl

    core = tl.core
    original = core.tensor.__init__
    scalars = _scalar_types(core)
    # A block type's name says its shape (`<['8', '16'], fp32>`); () for every scalar type.
    known: dict[Any, tuple[Any, list[Any], Any]] = {}

    def tensor_init(self: Any, handle: Any, type: Any) -> None:
        kind = builtins_type(type)
        if kind is core.block_type:
            key = type.name
        elif kind in scalars:
            key = ()
        else:
            return original(self, handle, type)
        found = known.get(key)
        if found is None:
            original(self, handle, type)
            known[key] = (self.numel, list(self.shape.values), self.shape.type)
            return None
        numel, values, tuple_type = found
        self.handle = handle
        self.shape = core.tuple(values, tuple_type)
        self.numel = numel
        self.type = type
        self.dtype = type.scalar
        return None

    tensor_init.__wrapped__ = original
    core.tensor.__init__ = tensor_init


def _set_method(instance: Any, name: str, function: Callable[..., Any]) -> None:
    """Bind `function` as `instance.name`, Triton's own method kept as its `__wrapped__`."""
    import types

    function.__wrapped__ = getattr(type(instance), name)
    setattr(instance, name, types.MethodType(function, instance))


def _patch_same_shape_broadcast(interp: Any) -> None:
    import triton.language as tl

    core = tl.core
    semantic = interp.interpreter_semantic
    original = type(semantic).broadcast_impl_value
    scalars = _scalar_types(core)

    def broadcast_impl_value(self: Any, lhs: Any, rhs: Any) -> Any:
        # Triton compares the shapes, finds nothing to expand and returns both as they are.
        lhs_ty, rhs_ty = getattr(lhs, "type", None), getattr(rhs, "type", None)
        lhs_kind, rhs_kind = type(lhs_ty), type(rhs_ty)
        if lhs_kind is core.block_type and rhs_kind is core.block_type:
            lhs_shape, rhs_shape = lhs_ty.shape, rhs_ty.shape
            if (
                type(lhs_shape) is core.tuple
                and type(rhs_shape) is core.tuple
                and lhs_shape.values == rhs_shape.values
            ):
                return lhs, rhs
        elif lhs_kind in scalars and rhs_kind in scalars:
            return lhs, rhs
        return original(self, lhs, rhs)

    _set_method(semantic, "broadcast_impl_value", broadcast_impl_value)


# The dtypes whose promotion with themselves is themselves (no division or modulo: those take
# fp16 and bf16 to fp32); fp8 pairs and anything else go through Triton's promotion.
_SELF_PROMOTING = frozenset(
    ("fp16", "bf16", "fp32", "fp64", "int1", "int8", "int16", "int32", "int64")
    + ("uint8", "uint16", "uint32", "uint64")
)


def _patch_same_dtype_operands(interp: Any) -> None:
    import triton.language as tl

    core = tl.core
    semantic = interp.interpreter_semantic
    original = type(semantic).binary_op_type_checking_impl

    def binary_op_type_checking_impl(
        self: Any,
        lhs: Any,
        rhs: Any,
        allow_lhs_ptr: bool = False,
        allow_rhs_ptr: bool = False,
        arithmetic_check: bool = True,
        div_or_mod: bool = False,
    ) -> Any:
        # Two tensors of one non-pointer dtype: no pointer check applies, the computation type
        # is that dtype, both casts return their input; what is left is the broadcast.
        if not div_or_mod and type(lhs) is core.tensor and type(rhs) is core.tensor:
            lhs_dtype, rhs_dtype = lhs.dtype, rhs.dtype
            if (
                type(lhs_dtype) is core.dtype
                and type(rhs_dtype) is core.dtype
                and lhs_dtype.name == rhs_dtype.name
                and lhs_dtype.name in _SELF_PROMOTING
            ):
                return self.broadcast_impl_value(lhs, rhs)
        return original(self, lhs, rhs, allow_lhs_ptr, allow_rhs_ptr, arithmetic_check, div_or_mod)

    _set_method(semantic, "binary_op_type_checking_impl", binary_op_type_checking_impl)


def _patch_overflow_checks(interp: Any) -> None:
    semantic = interp.interpreter_semantic
    original = type(semantic).binary_op_sanitize_overflow_impl

    def binary_op_sanitize_overflow_impl(self: Any, lhs: Any, rhs: Any, binary_op: Any) -> None:
        # Triton computes the operation again in int64 and compares it with the type's range,
        # then hands the result to device_assert, which drops it unless `debug` is on. Its
        # opening checks stay, with its words.
        if self.builder.options.debug:
            return original(self, lhs, rhs, binary_op)
        if lhs.type.scalar.int_bitwidth >= 64 or not self.builder.options.sanitize_overflow:
            return None
        lhs_sca_ty, rhs_sca_ty = lhs.type.scalar, rhs.type.scalar
        assert lhs_sca_ty == rhs_sca_ty, (
            f"expected matching operand types, got {lhs_sca_ty} and {rhs_sca_ty}"
        )
        assert lhs_sca_ty.is_int(), f"expected integer type, got {lhs_sca_ty}"
        return None

    _set_method(semantic, "binary_op_sanitize_overflow_impl", binary_op_sanitize_overflow_impl)


def is_limit(exc: BaseException) -> str | None:
    """What the interpreter could not run, when `exc` (or what it wraps) says so; else None.

    `InterpreterLimit` from the patches above, or a NotImplementedError that the interpreter
    itself raises ("... not supported in interpreter mode"), or a method that the interpreter's
    builder lacks (AttributeError on `InterpreterBuilder`), or an atomic its C++ part refuses.
    A NotImplementedError from the rest of triton (`tl.make_block_ptr`, removed in 3.9) is
    raised on a GPU too: not a limit.
    """
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        if isinstance(exc, InterpreterLimit):
            return str(exc)
        if isinstance(exc, NotImplementedError) and raised_in(exc, "runtime/interpreter.py"):
            return str(exc).strip() or "a feature of Triton"
        if isinstance(exc, AttributeError) and "'InterpreterBuilder' object" in str(exc):
            return f"a Triton operation ({str(exc).split('attribute')[-1].strip()})"
        if (
            isinstance(exc, ValueError)
            and str(exc) == "Unsupported data type"
            and raised_in(exc, "runtime/interpreter.py")
        ):
            # The interpreter's C++ atomics take fewer dtypes than a GPU's: tl.atomic_add into
            # bf16 memory, or tl.atomic_xchg of fp32 values, stop here and run on an H200.
            return "this atomic operation on values of this dtype"
        exc = exc.__cause__ or exc.__context__
    return None


def raised_in(exc: BaseException, part: str = "") -> bool:
    """True when the innermost frame of `exc` is in triton's package (in `part` of it if given)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    triton = sys.modules.get("triton")
    if triton is None or not getattr(triton, "__file__", None):
        return False
    package = Path(triton.__file__).resolve().parent
    where = Path(tb.tb_frame.f_code.co_filename).resolve()
    return where.is_relative_to(package / part if part else package)


# 14. Builtins listed once -----------------------------------------------------------------
#
# Each binding of the language (`_patch_lang`: every launch, and every jit helper's first call
# in it) lists every member of tl, tl.core, tl.math, tl.tensor and the tensor descriptors with
# `inspect.getmembers`, which reads and sorts them all, to find the builtins it binds to the
# interpreter: 5% of proving t3's files. Which names are builtins never changes: they are
# listed once, at install, before any launch has bound anything, and each binding binds those
# names whose member is a builtin at that moment, as the listing's own loop does.


def _patch_builtin_listing(interp: Any) -> None:
    import inspect

    import triton.language as tl

    original = interp._patch_builtin
    owners = (
        tl,
        tl.core,
        tl.math,
        tl.core.tensor,
        getattr(tl.core, "tensor_descriptor_base", None),
    )
    listed = {
        owner: [name for name, member in inspect.getmembers(owner) if tl.core.is_builtin(member)]
        for owner in owners
        if owner is not None
    }

    def patch_builtin(pkg: Any, builder: Any, scope: Any) -> None:
        names = listed.get(pkg)
        if names is None:
            return original(pkg, builder, scope)
        for name in names:
            member = getattr(pkg, name)
            if tl.core.is_builtin(member):
                interp._patch_attr(pkg, name, member, builder, scope)

    patch_builtin.__wrapped__ = original
    interp._patch_builtin = patch_builtin


# 15. bf16 conversions by shifts -----------------------------------------------------------
#
# Every bf16 load that is upcast (`.to(tl.float32)`) and every fp32 value stored as bf16 goes
# through `_convert_float`, a general converter between float formats in some forty numpy
# operations: 5% of proving t3's and t4's files. bf16 is the top half of fp32 (the same sign
# and exponent bits), so without a rounding mode (the interpreter truncates) the conversion is
# a shift of 16 bits, for every value but the subnormals (exponent bits 0, mantissa not 0),
# which the converter normalises in its own way: an array holding one goes to it, as before.


def _patch_bf16_conversions(interp: Any) -> None:
    import numpy as np
    import triton.language as tl

    original = interp._convert_float

    def convert_float(input: Any, input_dtype: Any, output_dtype: Any, rounding_mode: Any) -> Any:
        if rounding_mode is None and input_dtype == tl.bfloat16 and output_dtype == tl.float32:
            bits = np.frombuffer(input.tobytes(), dtype=np.uint16)
            if not any_subnormal(bits, 0x7F80, 0x007F):
                return (bits.astype(np.uint32) << 16).reshape(input.shape)
        elif rounding_mode is None and input_dtype == tl.float32 and output_dtype == tl.bfloat16:
            bits = np.frombuffer(input.tobytes(), dtype=np.uint32)
            if not any_subnormal(bits, 0x7F800000, 0x007FFFFF):
                return (bits >> 16).astype(np.uint16).reshape(input.shape)
        return original(input, input_dtype, output_dtype, rounding_mode)

    def any_subnormal(bits: Any, exponent: int, mantissa: int) -> bool:
        """Whether a value has exponent bits 0 and a mantissa that is not 0."""
        return bool(np.any(((bits & exponent) == 0) & ((bits & mantissa) != 0)))

    convert_float.__wrapped__ = original
    interp._convert_float = convert_float


# 16. Loads and stores only inside the launch's tensors ------------------------------------
#
# On a GPU a load far past every tensor reads whatever memory lies there, or faults; in the
# interpreter it reads the process's own heap through a raw pointer, or kills the process. The
# harness puts NaN guards around the inputs, but a load with swapped strides reaches far past
# them, and then the verdict changed from run to run, or the run died. Here a lane whose address
# lies outside every tensor the launch was given reads what the guards hold (NaN, or 0 inside
# inputs.guard_fill; 0 for integers) and a store there is dropped: the same on every run, and
# no crash. Lanes inside a tensor, its guards included, are untouched.

_launch_memory: list[tuple[int, int]] = []  # [start, end) of each storage the launch was given


def _patch_bounded_memory(interp: Any) -> None:
    import numpy as np
    import torch

    executor = interp.GridExecutor
    original_init_args = executor._init_args_hst

    def init_args_hst(self: Any, args_dev: Any, kwargs: Any) -> Any:
        args_hst, kwargs_hst = original_init_args(self, args_dev, kwargs)
        spans = set()
        for arg in _flat(list(args_hst) + list(kwargs_hst.values())):
            if isinstance(arg, torch.Tensor):
                storage = arg.untyped_storage()
                spans.add((storage.data_ptr(), storage.data_ptr() + storage.nbytes()))
        _launch_memory[:] = sorted(spans)
        return args_hst, kwargs_hst

    def outside(ptrs: Any) -> Any:
        """Where the lanes' addresses leave every storage of the launch, or None for none."""
        if not _launch_memory:
            return None
        address = ptrs.data
        width = max(ptrs.get_element_ty().primitive_bitwidth // 8, 1)
        inside = np.zeros(address.shape, dtype=bool)
        for start, end in _launch_memory:
            inside |= (address >= start) & (address <= end - width)
        return None if inside.all() else ~inside

    builder = interp.InterpreterBuilder
    original_load = builder.create_masked_load
    original_store = builder.create_masked_store

    # `rest`, `named`: the cache and eviction hints and volatility, which differ between
    # Triton releases (3.6 passes one more than 3.9, and names them from tensor descriptors)
    # and are handed on as they came.
    def create_masked_load(self, ptrs, mask, other, *rest, **named):
        away = outside(ptrs)
        if away is None:
            return original_load(self, ptrs, mask, other, *rest, **named)
        kept = interp.TensorHandle(mask.data & ~away, mask.dtype)
        loaded = original_load(self, ptrs, kept, other, *rest, **named)
        _fill_guard(loaded, mask.data & away, ptrs.get_element_ty())
        return loaded

    def create_masked_store(self, ptrs, value, mask, *rest, **named):
        away = outside(ptrs)
        if away is not None:
            mask = interp.TensorHandle(mask.data & ~away, mask.dtype)
        return original_store(self, ptrs, value, mask, *rest, **named)

    executor._init_args_hst = init_args_hst
    builder.create_masked_load = create_masked_load
    builder.create_masked_store = create_masked_store


def _flat(args: list[Any]) -> list[Any]:
    """The arguments with tuples opened and tensor descriptors' bases taken out."""
    out = []
    for arg in args:
        if isinstance(arg, tuple):
            out.extend(_flat(list(arg)))
        else:
            out.append(getattr(arg, "base", arg))
    return out


def _fill_guard(loaded: Any, lanes: Any, element: Any) -> None:
    """Put what the guards hold into `lanes` of a load: NaN (or guard_fill's value) for floats,
    0 for integers, which the load's `other` already gave."""
    import numpy as np
    import triton.language as tl

    if not lanes.any() or not element.is_floating():
        return
    value = guard_value()
    if element == tl.bfloat16:  # the interpreter keeps bf16 as its raw 16 bits
        bits = np.array([value], dtype=np.float32).view(np.uint32) >> 16
        loaded.data[lanes] = bits.astype(loaded.data.dtype)[0]
    else:
        loaded.data[lanes] = value
