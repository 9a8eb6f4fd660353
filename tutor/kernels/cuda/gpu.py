"""Launch a learner's CUDA C++ kernels on the GPU: NVRTC's cubin loaded with the driver API
(cuda-python's bindings), launched on torch's current stream with torch's tensors, so a CUDA
graph that torch captures holds them too.

Torch owns the CUDA context (its primary context on the current device); the module is loaded
into it. The compile facts of each kernel (registers, spills, shared memory) come from ptxas's
report through NVRTC and from the loaded function's attributes, for the perf coach.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.kernels.cuda import nvrtc
from tutor.kernels.cuda.host import Arg, Dims
from tutor.kernels.cuda.signature import Kernel
from tutor.lang.i18n import _

_CTYPES = {
    "i": ctypes.c_int32,
    "I": ctypes.c_uint32,
    "q": ctypes.c_int64,
    "Q": ctypes.c_uint64,
    "f": ctypes.c_float,
    "d": ctypes.c_double,
    "?": ctypes.c_bool,
}
MAX_STATIC_SHARED = 48 * 1024  # beyond this a launch must raise the function's dynamic limit

# Every launch of the GPU backends while `recording()` is open: the facts the bench reads.
_recorders: list[list[dict[str, Any]]] = []


def _driver() -> Any:
    from cuda.bindings import driver

    return driver


def _check(result: Any, what: str) -> Any:
    """The values after a driver call's status, or a KernelFailure naming the call."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    driver = _driver()
    if err != driver.CUresult.CUDA_SUCCESS:
        _e, name = driver.cuGetErrorName(err)
        raise KernelFailure(
            dx.CUDA_ERROR,
            _("{what} failed on the GPU: {error}").format(
                what=what, error=name.decode() if isinstance(name, bytes) else name
            ),
        )
    return rest[0] if len(rest) == 1 else rest


def arch() -> str:
    """`sm_90` for the current GPU."""
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


class GpuBackend:
    """The learner's kernels, compiled by NVRTC and loaded into torch's CUDA context."""

    def __init__(self, source: str, path: Path, kernels: list[str]) -> None:
        self.path = path
        torch.cuda.init()
        torch.cuda.current_stream().synchronize()  # torch's context is current on this thread
        driver = _driver()
        _check(driver.cuInit(0), "cuInit")
        self.compiled = nvrtc.compile_cubin(source, path, kernels, arch())
        self.module = _check(driver.cuModuleLoadData(self.compiled.cubin), "loading the cubin")
        self.functions = {
            name: _check(
                driver.cuModuleGetFunction(self.module, lowered.encode()), f"finding {name}"
            )
            for name, lowered in self.compiled.names.items()
        }
        # Only a file that still has a starter's TODO_KERNEL asks after each launch whether one
        # ran (a read back from the GPU, which a CUDA graph could not hold).
        self.todo = "TODO_KERNEL" in source

    def launch(self, kernel: Kernel, grid: Dims, block: Dims, shared: int, args: list[Arg]) -> None:
        driver = _driver()
        function = self.functions[kernel.name]
        values = []
        for arg in args:
            if arg.param.pointer:
                if not arg.value.is_cuda:
                    raise KernelFailure(
                        dx.CUDA_ERROR,
                        _("{name} got a tensor on the CPU where the GPU needs one").format(
                            name=kernel.name
                        ),
                    )
                values.append(ctypes.c_void_p(arg.value.data_ptr()))
            else:
                values.append(_CTYPES[arg.param.scalar[0]](arg.value))  # type: ignore[index]
        pointers = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
        if shared > MAX_STATIC_SHARED:
            attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(driver.cuFuncSetAttribute(function, attribute, shared), "raising shared memory")
        stream = torch.cuda.current_stream().cuda_stream
        _check(
            driver.cuLaunchKernel(
                function, *grid, *block, shared, stream, ctypes.addressof(pointers), 0
            ),
            _("launching {name}").format(name=kernel.name),
        )
        for found in _recorders:
            found.append(self.facts(kernel, grid, block, shared))
        if self.todo:
            self._said_todo(kernel)

    def facts(self, kernel: Kernel, grid: Dims, block: Dims, shared: int) -> dict[str, Any]:
        """One launch's compile and launch facts, in the fields the bench's rules read."""
        compiled = self.compiled.facts.get(kernel.name, {})
        threads = block[0] * block[1] * block[2]
        return {
            "kernel": self.compiled.names.get(kernel.name, kernel.name),
            "grid": list(grid),
            "programs": grid[0] * grid[1] * grid[2],
            "block": list(block),
            "n_regs": compiled.get("n_regs"),
            "n_spills": (compiled.get("spill_stores", 0) + compiled.get("spill_loads", 0)) // 4,
            "shared": compiled.get("shared", 0) + shared,
            "num_warps": -(-threads // 32),
            "num_stages": None,
            "barriers": compiled.get("barriers"),
            "tensor_cores": False,
            "dot_tiles": [],
        }

    def _said_todo(self, kernel: Kernel) -> None:
        driver = _driver()
        pointer, size = _check(
            driver.cuModuleGetGlobal(self.module, b"tutor_todo_line"), "reading the TODO marker"
        )
        line = ctypes.c_int32(0)
        torch.cuda.current_stream().synchronize()
        _check(driver.cuMemcpyDtoH(ctypes.addressof(line), pointer, 4), "reading the TODO marker")
        if line.value:
            raise KernelFailure(
                dx.NOT_WRITTEN,
                _("{file}:{line}: the kernel is not written yet ({name})").format(
                    file=self.path.name, line=line.value, name=kernel.name
                ),
                line=line.value,
            )


@contextlib.contextmanager
def recording() -> Iterator[list[dict[str, Any]]]:
    """The facts of every GPU launch of a learner's kernel made inside the block."""
    found: list[dict[str, Any]] = []
    _recorders.append(found)
    try:
        yield found
    finally:
        _recorders.remove(found)
