"""CUDA C++ as a kernel language (tutor.kernels.cuda), on a machine without a GPU: the kernels'
declarations read, a learner's .cu built by the system C++ compiler and run as a GPU would run
it, what the CPU scheduler and the sanitizers name (with lines), and NVRTC's compile errors and
compile facts where its wheel is installed."""

from __future__ import annotations

import shutil
import struct
import textwrap
from pathlib import Path

import pytest
import torch

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.kernels.cuda import evidence, nvrtc
from tutor.kernels.cuda.cpu import CpuBackend, build, launch
from tutor.kernels.cuda.host import Kernels
from tutor.kernels.cuda.signature import SignatureError, kernels_in

needs_compiler = pytest.mark.skipif(
    not any(shutil.which(c) for c in ("c++", "g++", "clang++")), reason="no C++ compiler here"
)

REDUCE = """\
#include <cuda_bf16.h>
// the sum of each row, two levels: warps by shuffles, then shared memory
__global__ void __launch_bounds__(256) row_sum(float* out, const float* __restrict__ x, int n) {
  __shared__ float partial[32];
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[blockIdx.x * (long long)n + i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int w = 0; w < blockDim.x / 32; ++w) t += partial[w];
    out[blockIdx.x] = t;
  }
}
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    """Builds go to one folder for this test module's worker, as a course's .tutor would hold."""
    monkeypatch.setenv("TUTOR_CUDA_CACHE", str(tmp_path_factory.getbasetemp() / "cuda-cache"))


def _kernels(tmp_path: Path, source: str, variant: str = "run", name: str = "k.cu") -> Kernels:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    found = kernels_in(path.read_text())
    return Kernels(found, CpuBackend(path.read_text(), path, list(found), variant), path)


def test_declarations_give_each_kernels_parameters_in_order():
    found = kernels_in(REDUCE + "\n__global__ void two(__nv_bfloat16* y, long long stride) {}\n")
    assert list(found) == ["row_sum", "two"]
    out, x, n = found["row_sum"].params
    assert (out.pointer, out.dtypes) == (True, ("float32",))
    assert (x.name, x.pointer, x.element) == ("x", True, "float")
    assert (n.pointer, n.scalar) == (False, ("i", "int"))
    assert found["row_sum"].line == 3
    assert found["two"].params[0].dtypes == ("bfloat16",)
    assert found["two"].params[1].scalar == ("q", "int")
    commented = "// __global__ void gone(int x) {}\n/* __global__ void also(int) */\n"
    assert kernels_in(commented) == {}
    with pytest.raises(SignatureError) as broken:
        kernels_in("\n\n__global__ void k(float* a,\n")
    assert broken.value.line == 3


@needs_compiler
def test_a_kernel_runs_on_the_cpu_as_on_a_gpu(tmp_path):
    kernels = _kernels(tmp_path, REDUCE)
    x = torch.randn(3, 1000)
    out = torch.zeros(3)
    kernels.row_sum((3,), (256,), (out, x, 1000))
    assert torch.allclose(out, x.sum(-1), atol=1e-3)
    again = torch.zeros(3)
    kernels.row_sum((3,), (256,), (again, x, 1000))
    assert torch.equal(out, again)  # the same order every time: the same bits


@needs_compiler
def test_a_launch_the_kernel_cannot_take_is_said_with_the_kernels_line(tmp_path):
    kernels = _kernels(tmp_path, REDUCE)
    with pytest.raises(KernelFailure) as wrong_dtype:
        kernels.row_sum((1,), (32,), (torch.zeros(1), torch.zeros(4).bfloat16(), 4))
    assert "float*, where the drill passes a bfloat16 tensor" in wrong_dtype.value.message
    assert wrong_dtype.value.line == 3
    with pytest.raises(KernelFailure) as count:
        kernels.row_sum((1,), (32,), (torch.zeros(1), torch.zeros(4)))
    assert "takes 3 parameters; the drill passes 2" in count.value.message
    with pytest.raises(KernelFailure) as missing:
        kernels.row_max((1,), (32,), ())
    assert missing.value.diagnosis == dx.MISSING_FUNCTION and "row_sum" in missing.value.message


@needs_compiler
def test_a_compile_error_names_the_learners_line(tmp_path):
    with pytest.raises(KernelFailure) as caught:
        _kernels(tmp_path, "__global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n")
    assert caught.value.diagnosis == dx.COMPILE_ERROR
    assert caught.value.line == 2 and caught.value.message.startswith("k.cu:2:")


@needs_compiler
def test_unwritten_shared_memory_reads_the_same_garbage_every_run(tmp_path):
    """A GPU's shared memory holds what the last block left: on the CPU every block starts with
    it full of 0xFF, so a read of a slot nobody wrote is NaN on every run, never a lucky 0."""
    kernels = _kernels(
        tmp_path,
        """\
        __global__ void k(float* out) {
          __shared__ float slots[32];
          if (threadIdx.x < 4) slots[threadIdx.x] = 1.0f;
          __syncthreads();
          if (threadIdx.x == 0) {
            float s = 0;
            for (int i = 0; i < 8; ++i) s += slots[i];
            out[blockIdx.x] = s;
          }
        }
        """,
    )
    out = torch.zeros(2)
    kernels.k((2,), (64,), (out,))
    assert torch.isnan(out).all()


@needs_compiler
@pytest.mark.parametrize(
    "body, diagnosis, words",
    [
        (  # a barrier only lane 0 of each warp reaches, while warp 0 waits at a shuffle
            """\
            __global__ void k(float* out) {
              __shared__ float w[8];
              float s = __shfl_xor_sync(0xffffffff, 1.0f, 1);
              if (threadIdx.x % 32 == 0) { w[threadIdx.x / 32] = s; __syncthreads(); }
              s = __shfl_xor_sync(0xffffffff, s, 2);
              out[threadIdx.x] = s;
            }
            """,
            dx.BARRIER_DIVERGENT,
            "reached __syncthreads",
        ),
        (  # a full mask in a warp of 16 lanes: lanes that do not exist
            """\
            __global__ void k(float* out) {
              float s = threadIdx.x;
              s += __shfl_down_sync(0xffffffff, s, 8);
              out[threadIdx.x] = s;
            }
            """,
            dx.SHUFFLE_MASK,
            "names lanes 0xffff0000",
        ),
    ],
)
def test_the_cpu_scheduler_names_who_never_arrives(tmp_path, body, diagnosis, words):
    kernels = _kernels(tmp_path, body)
    threads = 64 if diagnosis == dx.BARRIER_DIVERGENT else 16
    with pytest.raises(KernelFailure) as caught:
        kernels.k((1,), (threads,), (torch.zeros(threads),))
    assert caught.value.diagnosis == diagnosis
    assert words in caught.value.message and caught.value.line in (4, 3)


def _sanitizer_works(variant: str, tmp_path: Path) -> bool:
    try:
        _kernels(tmp_path, "__global__ void k(float* x) { x[0] = 1; }\n", variant, "probe.cu")
    except KernelFailure as failure:
        return failure.diagnosis != dx.TOOLCHAIN_MISSING
    return True


@needs_compiler
def test_thread_sanitizer_names_the_race_and_both_lines(tmp_path):
    if not _sanitizer_works("races", tmp_path):
        pytest.skip("no ThreadSanitizer runtime here")
    racy = REDUCE.replace("  __syncthreads();\n", "")
    kernels = _kernels(tmp_path, racy, "races")
    with pytest.raises(KernelFailure) as caught:
        kernels.row_sum((2,), (128,), (torch.zeros(2), torch.randn(2, 300), 300))
    assert caught.value.diagnosis == dx.MISSING_BARRIER
    assert "partial" in caught.value.message
    assert "line 8" in caught.value.message and "line 11" in caught.value.message


@needs_compiler
@pytest.mark.parametrize(
    "change, diagnosis",
    [
        (("i < n; i += blockDim.x", "i <= n; i += blockDim.x"), dx.OUT_OF_BOUNDS),
        (("partial[32]", "partial[2]"), dx.SHARED_TOO_SMALL),
    ],
)
def test_address_sanitizer_names_what_was_read_past_and_where(tmp_path, change, diagnosis):
    if not _sanitizer_works("memory", tmp_path):
        pytest.skip("no AddressSanitizer runtime here")
    kernels = _kernels(tmp_path, REDUCE.replace(*change), "memory")
    with pytest.raises(KernelFailure) as caught:
        kernels.row_sum((2,), (128,), (torch.zeros(2), torch.randn(2, 300), 300))
    assert caught.value.diagnosis == diagnosis
    assert caught.value.line in (6, 8)


def test_sanitizer_reports_are_read_for_the_learners_file_only():
    ran = launch.Ran(
        66,
        stderr=textwrap.dedent(
            """\
            WARNING: ThreadSanitizer: data race (pid=1)
              Write of size 4 at 0x10 by thread T3:
                #0 kern(float*) /tmp/x/c2_rmsnorm.cu:24 (p+0x1)
                #1 tutor::call /site/tutor_cuda.h:616 (p+0x2)

              Previous read of size 4 at 0x10 by thread T1:
                #0 kern(float*) /tmp/x/c2_rmsnorm.cu:26 (p+0x3)

              Location is global 'kern(float*)::warp_sums' of size 128 at 0x10 (p+0x4)
            """
        ),
    )
    (found,) = evidence.read(ran, "c2_rmsnorm.cu")
    assert found.diagnosis == dx.MISSING_BARRIER and found.line == 24
    assert "warp_sums" in found.message and "line 24" in found.message


def test_scalars_are_packed_as_their_c_type():
    assert launch.pack(3, "i") == struct.pack("<i", 3)
    assert launch.pack(1e-6, "f") == struct.pack("<f", 1e-6)
    assert launch.pack(-(2**40), "q") == struct.pack("<q", -(2**40))


def test_a_build_that_stops_names_its_cause_not_its_last_line(tmp_path):
    source = tmp_path / "scale.cu"
    source.write_text("__global__ void k() {}\n")
    log = (
        "In file included from <command-line>:\n"
        "/x/tutor_cuda.h:3:10: fatal error: tutor_fibers.h: No such file or directory\n"
        "compilation terminated.\n"
    )
    failure = build._failure(log, source, "run")
    assert failure.diagnosis == dx.COMPILE_ERROR
    assert "tutor_fibers.h: No such file" in failure.message


def test_a_missing_compiler_is_one_line_saying_what_to_install(monkeypatch, tmp_path):
    build.compiler.cache_clear()
    monkeypatch.setenv("CXX", "")
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    try:
        with pytest.raises(KernelFailure) as caught:
            _kernels(tmp_path, REDUCE)
    finally:
        build.compiler.cache_clear()
    assert caught.value.diagnosis == dx.TOOLCHAIN_MISSING
    assert "apt-get install g++" in caught.value.message and "\n" not in caught.value.message


needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC's wheel is not installed")


@needs_nvrtc
def test_nvrtc_gives_compile_facts_without_a_gpu(tmp_path):
    path = tmp_path / "k.cu"
    compiled = nvrtc.compile_cubin(REDUCE, path, ["row_sum"], "sm_90")
    facts = compiled.facts["row_sum"]
    assert compiled.cubin[:4] == b"\x7fELF"
    assert facts["n_regs"] > 0 and facts["barriers"] == 1 and facts["shared"] == 128
    assert facts["spill_stores"] == 0


@needs_nvrtc
def test_nvrtc_compile_errors_name_the_learners_line(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text("__global__ void k(float* x) {\n  x[0] = nope;\n}\n")
    with pytest.raises(KernelFailure) as caught:
        nvrtc.compile_cubin(path.read_text(), path, ["k"], "sm_90")
    assert caught.value.diagnosis == dx.COMPILE_ERROR and caught.value.line == 2
    assert '"nope" is undefined' in caught.value.message


@needs_compiler
@needs_nvrtc
def test_what_nvrtc_compiles_and_the_cpu_build_cannot_is_not_the_learners_mistake(tmp_path):
    """A CUDA intrinsic the tutor's CPU header lacks is an interpreter limit, not a compile
    error: NVRTC, the GPU's compiler, is the judge of what compiles."""
    from tutor.kernels.cuda import LANGUAGE

    path = tmp_path / "k.cu"
    path.write_text("__global__ void k(float* x) {\n  x[0] = __fmul_rz(x[0], 2.0f);\n}\n")
    with pytest.raises(KernelFailure) as caught:
        LANGUAGE._backend(path.read_text(), path, ["k"])
    assert caught.value.diagnosis == dx.INTERPRETER_LIMIT
    assert "NVRTC compiles it" in caught.value.message and caught.value.line == 2
    path.write_text("__global__ void k(float* x) {\n  x[0] = nope;\n}\n")
    with pytest.raises(KernelFailure) as caught:
        LANGUAGE._backend(path.read_text(), path, ["k"])
    assert caught.value.diagnosis == dx.COMPILE_ERROR and "NVRTC says" in caught.value.message


def test_the_deep_check_copies_a_tensor_as_it_lies_in_memory():
    """A sliced input keeps its strides and offset, and views of one storage share the copy."""
    from tutor.kernels.cuda import _copied_to_cpu

    base = torch.arange(40.0).reshape(4, 10)
    sliced, other = base[:, 2:7], base[1:, :3]
    copied, again, number = _copied_to_cpu((sliced, other, 3))
    assert copied.stride() == (10, 1) and copied.storage_offset() == 2
    assert torch.equal(copied, sliced) and torch.equal(again, other) and number == 3
    assert copied.untyped_storage().data_ptr() == again.untyped_storage().data_ptr()
    assert copied.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()


@needs_compiler
def test_a_kernels_printf_reaches_the_tests_output(tmp_path, capsys):
    source = (
        "#include <cstdio>\n"
        '__global__ void k(float* x) { if (threadIdx.x == 0) printf("hi %d\\n", 7); }\n'
    )
    kernels = _kernels(tmp_path, source)
    kernels.k((1,), (32,), (torch.zeros(1),))
    assert "hi 7" in capsys.readouterr().out
