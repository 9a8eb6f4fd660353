"""The interpreter patches (tutor/kernels/triton/interpreter.py): each runs a small kernel on the
CPU.

Triton must be imported with TRITON_INTERPRET=1 for its own jit functions (tl.zeros, tl.sum)
to be interpreted, and the project's session may have imported it already: so the kernel
tests run in a child pytest process of this file (`test_patches_in_a_fresh_process`), where
the variable is set first; in the parent they are skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tutor.course import diagnoses as dx
from tutor.harness.learner import classify
from tutor.kernels.triton import interpreter

CHILD = "TUTOR_INTERPRETER_CHILD"
ROOT = Path(__file__).resolve().parents[1]


def test_patches_in_a_fresh_process():
    if os.environ.get(CHILD):
        pytest.skip("this is the child")
    env = {**os.environ, "TRITON_INTERPRET": "1", CHILD: "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider", "-rs"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout.replace("1 skipped", "")


if os.environ.get(CHILD):  # the kernels exist in the child only, interpreted and patched
    interpreter.install()
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice
    from triton.language.extra.cuda.libdevice import tanh as cuda_tanh
    from triton.language.math import rsqrt

    @triton.jit
    def float_argument(y_ptr, eps):
        tl.store(y_ptr + tl.arange(0, 2), tl.zeros([2], tl.float32) + eps.to(tl.float32))

    @triton.jit
    def libdevice_calls(x_ptr, y_ptr, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + o)
        tl.store(y_ptr + o, libdevice.tanh(x))
        tl.store(y_ptr + BLOCK + o, cuda_tanh(x))
        tl.store(y_ptr + 2 * BLOCK + o, libdevice.erf(x))
        tl.store(y_ptr + 3 * BLOCK + o, libdevice.pow(x, 2.0))

    @triton.jit
    def name_imported(x_ptr, y_ptr, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        tl.store(y_ptr + o, rsqrt(tl.load(x_ptr + o)))

    @triton.jit
    def unmapped_libdevice(x_ptr):
        tl.store(x_ptr, libdevice.j0(tl.load(x_ptr)))

    @triton.jit
    def block_pointer(x_ptr):
        tl.make_block_ptr(x_ptr, (4,), (1,), (0,), (4,), (0,))

    @triton.jit
    def transpose_tile(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
        rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
        tile = tl.load(x_ptr + rows * N + cols)
        tl.store(y_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], tile.T)

    @triton.jit
    def libdevice_on_loaded(x_ptr, y_ptr, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        tl.store(y_ptr + o, libdevice.tanh(tl.load(x_ptr + o)))

    @triton.jit
    def atomic_sum(x_ptr, out_ptr, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        tl.atomic_add(out_ptr + o, tl.load(x_ptr + o))

    def sums_like_x(x):
        """A learner function: atomics into an output of x's dtype (bf16 memory for bf16 x)."""
        out = torch.zeros_like(x)
        atomic_sum[(2,)](x, out, BLOCK=x.numel())
        return out

    @triton.jit
    def helper(v):
        return tl.sum(v, axis=0)

    @triton.jit
    def loop_variables(y_ptr, n):
        for i in tl.range(tl.program_id(0), n, tl.num_programs(0)):
            tl.store(y_ptr + i.to(tl.int64), helper(tl.zeros([2], tl.float32) + 1.0))
        for j in range(0, 1):
            tl.store(y_ptr + n + j.to(tl.int64), 7.0)

    @triton.jit
    def scaled_rsqrt(v, scale):
        return rsqrt(v) * tl.max(scale, axis=0)

    @triton.jit
    def helper_in_a_loop(x_ptr, y_ptr, n_steps, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + o)
        acc = tl.zeros([BLOCK], tl.float32)
        for _ in range(n_steps):
            acc += scaled_rsqrt(x, x)
        tl.store(y_ptr + tl.program_id(0) * BLOCK + o, acc)

    @triton.jit
    def same_shapes(x_ptr, y_ptr, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + o)
        tl.store(y_ptr + o, x + x)
        tl.store(y_ptr + BLOCK + o, x * 2 + x)
        tl.store(y_ptr + 2 * BLOCK + o, (x / x).to(y_ptr.dtype.element_ty))

    @triton.jit
    def mismatched_shapes(x_ptr):
        tl.store(x_ptr + tl.arange(0, 4), tl.arange(0, 4) + tl.arange(0, 8))

    @triton.jit
    def far_reach(x_ptr, y_ptr, reach, BLOCK: tl.constexpr):
        """Loads BLOCK values `reach` elements apart and stores them back the same way: lanes
        past x are far outside every tensor of the launch."""
        o = tl.arange(0, BLOCK)
        tl.store(y_ptr + o, tl.load(x_ptr + o * reach))
        tl.store(x_ptr + o * reach, tl.load(x_ptr + o))

    @triton.jit
    def int_arithmetic(y_ptr, n, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        tl.store(y_ptr + o, n * 3 - 1 + o)


@pytest.fixture(scope="module")
def k():
    """The interpreted kernels (only in the child process)."""
    if not os.environ.get(CHILD):
        pytest.skip("runs in the child process (test_patches_in_a_fresh_process)")
    return SimpleNamespace(**globals())


def test_triton_version_is_the_tested_one():
    # Fails on an untested triton: re-read its runtime/interpreter.py against the patches.
    import triton

    assert triton.__version__.startswith(interpreter.TESTED_TRITON), triton.__version__
    assert interpreter.skipped == []


def test_float_argument_is_an_fp32_scalar(k):
    # Interpreter: a float argument stays a Python float, so eps.to(...) raised AttributeError.
    y = torch.zeros(2)
    k.float_argument[(1,)](y, 1e-5)
    assert torch.equal(y, torch.full((2,), 1e-5, dtype=torch.float32))


def test_libdevice_functions_compute_with_numpy(k):
    # Interpreter: generic libdevice stubs return None; CUDA ones refuse extern_elementwise.
    x = torch.linspace(-2.0, 2.0, 8)
    y = torch.zeros(32)
    k.libdevice_calls[(1,)](x, y, BLOCK=8)
    want = torch.cat((x.tanh(), x.tanh(), torch.erf(x), x * x))
    torch.testing.assert_close(y, want)


def test_builtins_imported_by_name(k):
    # Interpreter: only tl.* attributes are re-bound, so `rsqrt` bound at import time raised.
    x = torch.linspace(0.5, 4.0, 8)
    y = torch.zeros(8)
    k.name_imported[(1,)](x, y, BLOCK=8)
    torch.testing.assert_close(y, torch.rsqrt(x))
    assert k.rsqrt.__module__ == "triton.language.math"  # restored after the launch


def test_a_helper_called_again_and_again_is_bound_once_per_launch(k, monkeypatch):
    # Each call of a jit helper re-bound every builtin of tl, tl.core and tl.math (a third of
    # the drills' CPU time); bound once per function per launch, the helper still computes
    # with them on every call, in every program and every launch, and the names imported by
    # name are restored after it.
    from triton.runtime import interpreter as interp

    bindings = []
    original = interp._patch_builtin
    monkeypatch.setattr(
        interp, "_patch_builtin", lambda *a: (bindings.append(a[0]), original(*a))[1]
    )
    x = torch.linspace(0.5, 4.0, 8)
    counted = {}
    for steps in (1, 6):
        for _ in range(2):
            y = torch.zeros(16)
            bindings.clear()
            k.helper_in_a_loop[(2,)](x, y, steps, BLOCK=8)
            torch.testing.assert_close(y, (steps * torch.rsqrt(x) * 4.0).repeat(2))
            counted[steps] = len(bindings)
    assert counted[6] == counted[1]
    assert k.rsqrt.__module__ == "triton.language.math"


def test_builtins_listed_once_are_the_ones_a_binding_finds(k):
    # Listed at install: each binding binds the same names, with the same members, as one that
    # lists them with inspect.getmembers then; both put them back after.
    from triton.runtime import interpreter as interp

    for owner in (tl, tl.core, tl.math, tl.core.tensor):
        bound = []
        for patch_builtin in (interp._patch_builtin, interp._patch_builtin.__wrapped__):
            scope = interp._LangPatchScope()
            patch_builtin(owner, None, scope)
            bound.append([(name, member) for _, name, member in scope._changes])
            scope.restore()
        assert bound[0] == bound[1] and bound[0], owner
    assert tl.core.is_builtin(tl.core.tensor.__add__)  # put back: the member itself again
    y = torch.zeros(16)
    k.helper_in_a_loop[(2,)](torch.linspace(0.5, 4.0, 8), y, 2, BLOCK=8)
    torch.testing.assert_close(y, (2 * torch.rsqrt(torch.linspace(0.5, 4.0, 8)) * 4.0).repeat(2))


def test_bf16_conversions_by_shifts_give_the_converters_bits(k):
    # Every bf16 pattern up to fp32, and fp32 patterns down to bf16 (every exponent with edge
    # and random mantissas, signed zeros, infinities, NaNs, subnormals): the same bits as the
    # interpreter's converter, in arrays with subnormals and without.
    from triton.runtime import interpreter as interp

    shifted, converter = interp._convert_float, interp._convert_float.__wrapped__
    every_bf16 = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    normal = every_bf16[((every_bf16 & 0x7F80) != 0) | ((every_bf16 & 0x7F) == 0)]
    gen = np.random.default_rng(0)
    exponents = np.arange(256, dtype=np.uint32) << 23
    mantissas = np.array([0, 1, 0x7FFF, 0x8000, 0x10000, 0x7FFFFF], dtype=np.uint32)
    fp32 = (exponents[:, None] | mantissas[None, :]).ravel()
    fp32 = np.concatenate([fp32, fp32 | 0x80000000, gen.integers(0, 2**32, 4096, np.uint32)])
    for values, source, target in (
        (every_bf16, tl.bfloat16, tl.float32),
        (normal, tl.bfloat16, tl.float32),
        (fp32.view(np.float32), tl.float32, tl.bfloat16),
        (fp32[(fp32 & 0x7F800000) != 0].view(np.float32), tl.float32, tl.bfloat16),
    ):
        for shape in ((values.size,), (1, values.size)):
            got = shifted(values.reshape(shape), source, target, None)
            want = converter(values.reshape(shape), source, target, None)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want), (source, target)


def test_numpy_dtypes_looked_up_once_are_the_interpreters_own(k):
    # Looked up once per Triton type: each type keeps its own numpy dtype, asked again and again.
    from triton.runtime import interpreter as interp

    types = [tl.float32, tl.bfloat16, tl.int1, tl.int64, tl.pointer_type(tl.float32)]
    types += [tl.block_type(t, [4, 2]) for t in types] + [tl.block_type(tl.int8, [4, 2])]
    for _ in range(2):
        for t in types:
            assert interp._get_np_dtype(t) == interp._get_np_dtype.__wrapped__(t), t
    assert interp._get_np_dtype(tl.block_type(tl.bfloat16, [8])) == np.uint16


def test_block_types_built_once_per_shape_are_triton_s_own(k, monkeypatch):
    # A block type's shape, numel and name are worked out once per (element type, shape): the
    # same fields as Triton's __init__ gives, a fresh shape tuple each time, Triton's errors.
    import triton.language as tl

    def triton_s(element, shape):
        made = object.__new__(tl.block_type)
        tl.block_type.__init__.__wrapped__(made, element, shape)
        return made

    checks = []
    original = tl.core.validate_block_shape
    monkeypatch.setattr(
        tl.core, "validate_block_shape", lambda s: (checks.append(s), original(s))[1]
    )
    shapes = ([4, 2], tl.core.tuple([4, 2]), [tl.constexpr(4), 2], [16])
    for element in (tl.float32, tl.bfloat16, tl.pointer_type(tl.int8), tl.pointer_type(tl.int8)):
        for shape in shapes:
            a = tl.block_type(element, shape)  # Triton's checks run, if it is new
            checks.clear()
            b, want = tl.block_type(element, shape), triton_s(element, shape)
            assert vars(a).keys() == vars(want).keys() and a == b == want
            assert (a.name, a.numel, a.shape.values) == (want.name, want.numel, want.shape.values)
            assert a.shape is not b.shape and a.shape.values is not b.shape.values
            assert a.element_ty is element and type(a.shape) is tl.core.tuple
            if all(type(v) is int for v in shape):
                assert len(checks) == 1, (element, shape)  # want's only: b was known
    for bad, error in (([3, 2], "must be a power of 2"), ([], "0d block_type"), ((4, 2), "^$")):
        for _ in range(2):  # (4, 2): Triton asserts a list or tl.tuple, though [4, 2] is known
            with pytest.raises((ValueError, TypeError, AssertionError), match=error):
                tl.block_type(tl.float32, bad)


def test_tensor_shapes_built_once_per_type(k):
    # A tensor's shape (a tuple of constexprs) and numel are built once per type: equal to
    # Triton's, a fresh tuple for each tensor.
    import triton.language as tl
    from triton.runtime import interpreter as interp

    handle = interp.TensorHandle(np.zeros((4, 8), np.float32), tl.float32)
    for ty in (tl.block_type(tl.float32, [4, 8]), tl.float32, tl.pointer_type(tl.float32)):
        a, b = tl.tensor(handle, ty), tl.tensor(handle, ty)
        want = object.__new__(tl.tensor)
        tl.tensor.__init__.__wrapped__(want, handle, ty)
        assert vars(a).keys() == vars(want).keys()
        assert [s.value for s in a.shape] == [s.value for s in want.shape]
        assert a.numel.value == want.numel.value and a.type is ty and a.dtype == want.dtype
        assert a.shape.type == want.shape.type and a.shape is not b.shape
        assert a.numel is b.numel  # built once


def test_same_shape_broadcast_and_same_dtype_operands_skip_triton_s_work(k, monkeypatch):
    # Two blocks of one shape are not broadcast, two tensors of one dtype are not promoted;
    # the kernel's values (bf16's raw-integer garbage too) and Triton's shape errors are as
    # Triton's own methods give them.
    from triton.runtime import interpreter as interp

    semantic = interp.interpreter_semantic
    promoted = []
    original = semantic.computation_type_impl
    monkeypatch.setattr(
        semantic, "computation_type_impl", lambda *a: (promoted.append(a), original(*a))[1]
    )
    x = torch.linspace(-2.0, 2.0, 8)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        y, want = torch.empty(24, dtype=dtype), torch.empty(24, dtype=dtype)
        promoted.clear()
        k.same_shapes[(1,)](x.to(dtype), y, BLOCK=8)
        assert len(promoted) == 2  # the scalar 2 and the division, not the same-dtype adds
        with monkeypatch.context() as triton_s:
            for name in ("broadcast_impl_value", "binary_op_type_checking_impl"):
                triton_s.delattr(semantic, name)  # the class's: Triton's own
            k.same_shapes[(1,)](x.to(dtype), want, BLOCK=8)
        assert torch.equal(y.view(torch.int16), want.view(torch.int16)), dtype
        if dtype != torch.bfloat16:
            xs = x.to(dtype)
            assert torch.equal(y[:16], torch.cat((xs + xs, xs * 2 + xs)))
    with pytest.raises(Exception) as caught:
        k.mismatched_shapes[(1,)](x)
    assert "incompatible dimensions at index 0: 4 and 8" in "".join(map(str, _chain(caught.value)))


def test_overflow_checks_run_only_with_debug(k, monkeypatch):
    # Triton checks int32 +, -, * for overflow in int64 and hands the check to device_assert,
    # which drops it unless debug is on: skipped without debug, raised with it.
    from triton.runtime import interpreter as interp

    casts = []
    builder = interp.interpreter_builder
    original = builder.create_int_cast
    monkeypatch.setattr(builder, "create_int_cast", lambda *a: (casts.append(a), original(*a))[1])
    y = torch.zeros(4, dtype=torch.int32)
    k.int_arithmetic[(1,)](y, 7, BLOCK=4)
    assert y.tolist() == [7 * 3 - 1 + i for i in range(4)] and casts == []
    monkeypatch.setattr(builder, "options", interp.InterpreterOptions(debug=True))
    k.int_arithmetic[(1,)](y, 7, BLOCK=4)
    assert len(casts) > 0  # Triton's check ran
    with pytest.raises(Exception) as caught:
        k.int_arithmetic[(1,)](y, 2**30, BLOCK=4)
    assert "int32 overflow detected" in "".join(map(str, _chain(caught.value)))


def _chain(exc):
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_memory_outside_the_launch_s_tensors_reads_the_guard_and_takes_no_store(k, dtype):
    # Interpreter: a lane far past every tensor read the process's heap (a different value each
    # run) or killed the process; a store there corrupted it.
    from tutor.harness.inputs import guard_fill

    x, y = torch.arange(4.0, dtype=dtype), torch.zeros(4, dtype=dtype)
    k.far_reach[(1,)](x, y, 1 << 24, BLOCK=4)
    assert y[0].item() == 0.0 and bool(y[1:].isnan().all())
    assert torch.equal(x, torch.arange(4.0, dtype=dtype))  # the store inside x landed, as 0
    with guard_fill(0.0):
        k.far_reach[(1,)](x, y, 1 << 24, BLOCK=4)
    assert torch.equal(y, torch.zeros(4, dtype=dtype))


def test_loop_variables_are_scalar_tensors(k):
    # Interpreter: a loop variable was a Python int, so i.to(tl.int64) raised AttributeError.
    y = torch.zeros(6)
    k.loop_variables[(2,)](y, 5)
    assert y.tolist() == [2.0] * 5 + [7.0]
    assert list(interpreter.scalar_range(3)) == [0, 1, 2]  # Python's range outside a launch


def test_unmapped_libdevice_function_is_an_interpreter_limit(k):
    # No numpy equivalent of j0: the harness says the interpreter cannot run it, with the line.
    x = torch.ones(1)
    with pytest.raises(Exception) as caught:
        k.unmapped_libdevice[(1,)](x)
    here = Path(__file__)
    failure = classify(caught.value, "unmapped", here)
    assert failure.diagnosis == dx.INTERPRETER_LIMIT
    assert "__nv_j0f" in failure.message and "runs on a GPU" in failure.message
    assert (
        failure.line is not None
        and "libdevice.j0" in here.read_text().splitlines()[failure.line - 1]
    )


def test_interpreter_not_implemented_is_a_limit_not_a_starter(k):
    # The interpreter raises NotImplementedError for what it lacks: not `not-started`.
    from triton.runtime import interpreter as interp

    try:
        interp.InterpreterBuilder.create_inline_asm(None, "", "", [], [], False, 1)
    except NotImplementedError as exc:
        assert interpreter.is_limit(exc) is not None
    except Exception:  # noqa: BLE001 - another triton: covered by the version test
        pytest.skip("this triton's interpreter does not refuse inline asm this way")
    assert interpreter.is_limit(NotImplementedError("TODO: write the kernel")) is None


def test_install_warns_on_an_untested_version(k, monkeypatch):
    import triton

    monkeypatch.setattr(interpreter, "_installed", False)
    monkeypatch.setattr(triton, "__version__", "99.0.0")
    from triton.runtime import interpreter as interp

    for name in ("_implicit_cvt", "_patch_lang"):
        monkeypatch.setattr(interp, name, getattr(interp, name))  # restored after the test
    monkeypatch.setattr(interp.GridExecutor, "__call__", interp.GridExecutor.__call__)
    monkeypatch.setattr(
        interp.InterpreterBuilder,
        "create_extern_elementwise",
        interp.InterpreterBuilder.create_extern_elementwise,
    )
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        interpreter.install()
    assert any("tested with triton" in str(w.message) for w in seen)


def test_triton_api_refusal_is_named_block_pointers_on_both_backends(k):
    # tl.make_block_ptr raises NotImplementedError in triton 3.9 itself, on a GPU too: it is
    # block-pointers (Triton removed them, older tutorials teach them), neither `not-started`
    # nor a limit of the interpreter.
    x = torch.ones(4)
    try:
        k.block_pointer[(1,)](x)
    except Exception as exc:  # noqa: BLE001 - classified below
        failure = classify(exc, "kernel", Path(__file__))
    else:
        pytest.skip("this triton still has block pointers")
    assert failure.diagnosis == dx.BLOCK_POINTERS
    assert failure.line is not None
    assert "tl.make_block_ptr no longer exists" in failure.message


def test_bf16_no_upcast_says_it_depends_on_the_backend(k):
    # bf16 arithmetic without an upcast is garbage only in the interpreter: the failure says so.
    from tutor.harness import DrillFailure, Tolerance, expect_close
    from tutor.run.results import BACKEND_NOTE

    want = torch.ones(4, dtype=torch.bfloat16)
    with pytest.raises(DrillFailure) as caught:
        expect_close(
            torch.zeros(4, dtype=torch.bfloat16) + 3,
            want,
            what="y",
            tol=Tolerance(1e-2, 1e-2),
            fp32_rerun=lambda: torch.ones(4),
            fp32_expected=torch.ones(4),
        )
    assert caught.value.diagnosis == dx.BF16_NO_UPCAST
    # said once for the run, beside its failures (tutor.coach.report), not in each one's details
    assert "depends on the backend" in caught.value.facts[BACKEND_NOTE]
    assert "depends on the backend" not in caught.value.details


def test_tile_dot_t_is_a_transpose_not_a_global(k):
    # `tile.T` put "T" among the kernel's names, and the interpreter's own globals (a TypeVar
    # T among them) are copied into the kernel's module: it was refused as a plain global.
    x = torch.arange(32.0).reshape(4, 8)
    y = torch.empty(8, 4)
    k.transpose_tile[(1,)](x, y, M=4, N=8)
    assert torch.equal(y, x.T)


def test_libdevice_on_bf16_values_is_bf16_no_upcast(k):
    # libdevice has fp32 and fp64 versions only: the lookup's KeyError is the GPU's too.
    x = torch.linspace(-2.0, 2.0, 8).to(torch.bfloat16)
    with pytest.raises(Exception) as caught:
        k.libdevice_on_loaded[(1,)](x, torch.empty_like(x), BLOCK=8)
    failure = classify(caught.value, "kernel", Path(__file__))
    assert failure.diagnosis == dx.BF16_NO_UPCAST
    assert "bf16" in failure.message
    assert "libdevice.tanh" in Path(__file__).read_text().splitlines()[failure.line - 1]


def test_an_interpreter_limit_on_bf16_values_is_bf16_no_upcast_when_fp32_runs(k):
    # The interpreter's atomics refuse bf16 memory (a GPU runs them): a limit on its own...
    from tutor.harness import DrillFailure, observe
    from tutor.kernels.triton import launches

    launches.install()  # as learner.load does: observe counts the launches
    x = torch.linspace(-2.0, 2.0, 8).to(torch.bfloat16)
    with pytest.raises(Exception) as caught:
        k.atomic_sum[(1,)](x, torch.zeros_like(x), BLOCK=8)
    assert classify(caught.value, "kernel", Path(__file__)).diagnosis == dx.INTERPRETER_LIMIT
    # ... but the learner's function runs on fp32 copies of its inputs: bf16 arithmetic.
    with pytest.raises(DrillFailure) as observed:
        observe(k.sums_like_x, "sums_like_x", Path(__file__))(x)
    assert observed.value.diagnosis == dx.BF16_NO_UPCAST
    assert "fp32 copies" in observed.value.details
    summed = observe(k.sums_like_x, "sums_like_x", Path(__file__))(x.float())
    torch.testing.assert_close(summed, 2 * x.float())


def test_bounded_memory_hands_on_the_hints_of_any_triton_release():
    """Patch 16 wraps the interpreter's masked load and store. Triton 3.6 passes one hint more
    than 3.9 (cache modifier, eviction policy, volatility) and, from tensor descriptors, passes
    them by name: whatever follows the pointer, mask and value must reach Triton as it came (a
    fixed signature failed every CPU run on 3.6)."""
    calls = []

    class Builder:  # Triton 3.6's signatures
        def create_masked_load(
            self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile
        ):
            calls.append(("load", cache_modifier, eviction_policy, is_volatile))

        def create_masked_store(self, ptrs, value, mask, cache_modifier, eviction_policy):
            calls.append(("store", cache_modifier, eviction_policy))

    class Executor:
        def _init_args_hst(self, args_dev, kwargs):
            return args_dev, kwargs

    fake = SimpleNamespace(GridExecutor=Executor, InterpreterBuilder=Builder)
    saved = list(interpreter._launch_memory)
    interpreter._launch_memory.clear()  # no launch's tensors known: nothing is fenced
    try:
        interpreter._patch_bounded_memory(fake)
        builder = Builder()
        builder.create_masked_load("p", "m", None, ".ca", "evict_last", False)
        builder.create_masked_load(
            "p", "m", None, cache_modifier=".cg", eviction_policy="", is_volatile=True
        )
        builder.create_masked_store("p", "v", "m", ".wb", "evict_first")
    finally:
        interpreter._launch_memory[:] = saved
    assert calls == [
        ("load", ".ca", "evict_last", False),
        ("load", ".cg", "", True),
        ("store", ".wb", "evict_first"),
    ]
