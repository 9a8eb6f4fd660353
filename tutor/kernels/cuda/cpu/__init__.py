"""CUDA C++ on the CPU: the learner's kernels built by the system C++ compiler and run as the GPU
would run them (tutor_cuda.h), each launch in a program of its own (build.py, launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.kernels.cuda import evidence
from tutor.kernels.cuda.cpu import build, launch
from tutor.kernels.cuda.host import Arg, Dims
from tutor.kernels.cuda.signature import Kernel
from tutor.lang.i18n import _


class CpuBackend:
    """Launches on the CPU in one build of the learner's file: `run` (fibers, deterministic),
    `races` (ThreadSanitizer) or `memory` (AddressSanitizer)."""

    def __init__(self, source: str, path: Path, kernels: list[str], variant: str = "run") -> None:
        self.path, self.variant = path, variant
        self._source, self._kernels = source, kernels
        self.program = self._built(variant)

    def _built(self, variant: str) -> Path:
        try:
            return build.build(self._source, self.path, self._kernels, variant)
        except build.ToolMissing as exc:
            raise KernelFailure(dx.TOOLCHAIN_MISSING, str(exc)) from None

    def launch(self, kernel: Kernel, grid: Dims, block: Dims, shared: int, args: list[Arg]) -> None:
        packed: list[tuple[str, Any]] = []
        for arg in args:
            if arg.param.pointer:
                packed.append(("ptr", arg.value.detach().cpu() if arg.value.is_cuda else arg.value))
            else:
                fmt, _kind = arg.param.scalar  # type: ignore[misc]
                packed.append(("value", launch.pack(arg.value, fmt)))
        ran = launch.run(self.program, kernel.name, grid, block, shared, packed)
        if ran.stdout:
            print(ran.stdout, end="")  # the kernel's printf, shown with the test's own output
        if ran.returncode < 0 and not ran.timed_out and self.variant == "run":
            # A crash (a write past a __shared__ array or a buffer can overwrite the program
            # itself): the same launch in the AddressSanitizer build says where, with its line.
            ran = launch.run(self._built("memory"), kernel.name, grid, block, shared, packed)
        found = evidence.read(ran, self.path.name)
        if found:
            first = found[0]
            raise KernelFailure(first.diagnosis, first.message, line=first.line)
        if ran.timed_out:
            raise KernelFailure(
                dx.KERNEL_HANG,
                _(
                    "{kernel} did not finish on the CPU within {seconds:.0f} s: a loop that "
                    "never ends?"
                ).format(kernel=kernel.name, seconds=launch.LAUNCH_TIMEOUT_S),
            )
        if ran.returncode != 0:
            raise KernelFailure(
                dx.CUDA_ERROR,
                _("{kernel} crashed on the CPU ({how}): an access far outside a buffer?").format(
                    kernel=kernel.name, how=_exit_words(ran.returncode)
                ),
                ran.stderr.strip()[-400:],
            )


def _exit_words(returncode: int) -> str:
    if returncode < 0:
        import signal

        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"
