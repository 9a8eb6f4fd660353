"""CUDA C++: a learner's `.cu` file holds kernels; the drill's host code launches them.

On a GPU the file compiles with NVRTC (tutor.kernels.cuda.nvrtc) and runs on torch's tensors
(tutor.kernels.cuda.gpu); on any CPU it compiles with the system C++ compiler against the
tutor's CUDA-on-CPU header and runs there (tutor.kernels.cuda.cpu), one fiber per CUDA thread.
The drill's host code (`drills/host/<file stem>.py`, tutor.kernels.cuda.host) is the learner
module's face: each of its functions gets the learner's kernels first.

Beyond outputs, a run shows a barrier not every thread reaches and a shuffle whose mask names
lanes that never call it (the CPU scheduler); `deep_check` runs a call again in the
ThreadSanitizer and AddressSanitizer builds, on the CPU whatever the backend, for the races and
the out-of-bounds accesses, each with its line (tutor.kernels.cuda.evidence).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from tutor.course import diagnoses as dx
from tutor.kernels.base import CPU, CUDA, Backend, KernelFailure, KernelLanguage
from tutor.lang.i18n import N_, _
from tutor.states import CUDA_ON_CPU


class Cuda(KernelLanguage):
    name = "cuda"
    suffix = ".cu"
    syntax = "cpp"
    kernel_noun = N_("a CUDA kernel")

    def __init__(self) -> None:
        self.on_gpu = False

    def preload(self, cpu: bool) -> None:
        import tutor.kernels.cuda.cpu  # noqa: F401
        import tutor.kernels.cuda.evidence  # noqa: F401
        import tutor.kernels.cuda.host  # noqa: F401
        import tutor.kernels.cuda.signature  # noqa: F401

        if not cpu:
            with contextlib.suppress(ImportError):
                import cuda.bindings.driver  # noqa: F401
                import cuda.bindings.nvrtc  # noqa: F401

                import tutor.kernels.cuda.gpu  # noqa: F401

    def prime(self) -> None:
        """Nothing beyond what torch's CUDA start does: NVRTC loads with the first compile."""

    def select_backend(self, force_cpu: bool, restart_cold: Callable[[], None]) -> Backend:
        import torch

        from tutor.kernels.cuda import nvrtc

        self.on_gpu = not force_cpu and torch.cuda.is_available() and nvrtc.available()
        if self.on_gpu:
            return Backend(CUDA, "cuda", torch.cuda.get_device_name())
        return Backend(CPU, "cpu", CUDA_ON_CPU)

    def load(self, path: Path, module_name: str, host: Path | None = None) -> ModuleType:
        from tutor.kernels.cuda.host import Kernels
        from tutor.kernels.python_file import import_file

        source, found = _read(path)
        backend = self._backend(source, path, list(found))
        if host is None or not host.is_file():
            raise KernelFailure(
                dx.MISSING_FILE,
                _("no host code for {file}: a CUDA C++ drill needs drills/host/{stem}.py").format(
                    file=path.name, stem=path.stem
                ),
            )
        host_module = import_file(host, f"{module_name}_host")
        return bound(host_module, Kernels(found, backend, path), module_name)

    def _backend(self, source: str, path: Path, kernels: list[str]) -> Any:
        if self.on_gpu:
            from tutor.kernels.cuda.gpu import GpuBackend

            return GpuBackend(source, path, kernels)
        from tutor.kernels.cuda import nvrtc
        from tutor.kernels.cuda.cpu import CpuBackend

        if not nvrtc.available():
            return CpuBackend(source, path, kernels)
        # NVRTC is the judge of what compiles, as on a GPU: its errors are the learner's. What
        # it accepts and the CPU's build refuses is a CUDA feature the CPU header lacks.
        nvrtc.compile_cubin(source, path, kernels, nvrtc.DEFAULT_ARCH)
        try:
            return CpuBackend(source, path, kernels)
        except KernelFailure as failure:
            if failure.diagnosis != dx.COMPILE_ERROR:
                raise
            raise KernelFailure(
                dx.INTERPRETER_LIMIT,
                _(
                    "{file}: NVRTC compiles it, the CPU build cannot ({error}); your code may "
                    "be right: it runs on a GPU"
                ).format(file=path.name, error=failure.message),
                failure.details,
                line=failure.line,
            ) from None

    def classify(self, exc: BaseException, name: str, path: Path) -> KernelFailure:
        from tutor.kernels.errors import chain, deepest_line, gpu_fault, not_written, python_error

        for error in chain(exc):
            if isinstance(error, KernelFailure):
                return error
        line = deepest_line(exc, path)
        if isinstance(exc, NotImplementedError):
            return not_written(name, exc, path, line)
        return gpu_fault(name, exc, line) or python_error(name, exc, path, line)

    def install_launch_hooks(self) -> None:
        """Nothing to hook: every launch goes through tutor.kernels.cuda.host, which logs it."""

    def recorded_launches(self) -> contextlib.AbstractContextManager[list[dict[str, Any]]]:
        from tutor.kernels.cuda.gpu import recording

        return recording()

    def deep_check(self, module: ModuleType, function: str, args: tuple, kwargs: dict) -> None:
        """Call `function` again with every launch in the AddressSanitizer build, then the
        ThreadSanitizer build, on the CPU (tensors copied there): the first race or
        out-of-bounds access found is a KernelFailure with its lines."""
        from tutor.kernels.cuda.cpu import CpuBackend
        from tutor.kernels.cuda.host import Kernels

        kernels: Kernels = module.__kernels__
        source, found = _read(kernels.path)
        for variant in ("memory", "races"):  # an overflow can look like a race, not the reverse
            backend = CpuBackend(source, kernels.path, list(found), variant)
            host = getattr(module.__host__, function)
            host(Kernels(found, backend, kernels.path), *_copied_to_cpu(args), **kwargs)

    def versions(self) -> dict[str, str | None]:
        from tutor.kernels.cuda import nvrtc

        return {"nvrtc": nvrtc.version()}


def _copied_to_cpu(args: tuple) -> list[Any]:
    """The arguments with every tensor copied to the CPU as it lies in memory: the same strides
    and offset in a copy of its whole storage, and tensors that share a storage (q, k and v of
    one projection) sharing the copy, so a sanitizer sees the layout the kernel was given."""
    import torch

    copies: dict[int, torch.Tensor] = {}
    out: list[Any] = []
    for arg in args:
        if not isinstance(arg, torch.Tensor):
            out.append(arg)
            continue
        storage = arg.untyped_storage()
        if storage.data_ptr() not in copies:
            raw = torch.empty(0, dtype=torch.uint8, device=arg.device).set_(storage)
            copies[storage.data_ptr()] = raw.detach().cpu().clone()
        base = torch.empty(0, dtype=arg.dtype).set_(copies[storage.data_ptr()].untyped_storage())
        out.append(base.as_strided(arg.size(), arg.stride(), arg.storage_offset()))
    return out


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    """The learner's source and its kernels; a declaration this cannot read is a failure."""
    from tutor.kernels.cuda.signature import SignatureError, kernels_in
    from tutor.kernels.errors import excerpt

    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise KernelFailure(
            dx.IMPORT_ERROR, _("{file} is not UTF-8 text").format(file=path.name)
        ) from None
    try:
        return source, kernels_in(source)
    except SignatureError as exc:
        raise KernelFailure(
            dx.COMPILE_ERROR,
            _("{file}:{line}: {error}").format(file=path.name, line=exc.line, error=exc),
            excerpt(path, exc.line),
            line=exc.line,
        ) from None


def bound(host: ModuleType, kernels: Any, name: str) -> ModuleType:
    """A module whose functions are the host's, each given the learner's kernels first."""
    module = types.ModuleType(name)
    for attr, value in vars(host).items():
        if inspect.isfunction(value) and value.__module__ == host.__name__ and attr[0] != "_":
            setattr(module, attr, functools.partial(value, kernels))
    module.__kernels__ = kernels  # type: ignore[attr-defined]
    module.__host__ = host  # type: ignore[attr-defined]
    module.__file__ = str(kernels.path)
    return module


LANGUAGE = Cuda()
