"""Triton: a learner's file is a Python module with `@triton.jit` kernels and their wrappers.

On a GPU the kernels compile with Triton; on the CPU they run in Triton's interpreter, which
must be switched on (TRITON_INTERPRET=1) before triton is first imported and is patched to run
what the GPU runs (tutor.kernels.triton.interpreter). Errors are named in
tutor.kernels.triton.errors, launches recorded by tutor.kernels.triton.launches, compile facts
read by tutor.kernels.triton.facts.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from tutor.kernels.base import CPU, CUDA, Backend, KernelFailure, KernelLanguage
from tutor.lang.i18n import N_
from tutor.states import TRITON_INTERPRETER

# What a run imports after the fork on its first launch, every time, unless the warm process
# did: Triton's code generator, Gluon and libdevice (found by listing sys.modules before and
# after a run of each drill). None of them starts CUDA.
LAZY_IMPORTS = (
    "triton.compiler.code_generator",
    "triton.experimental.gluon",
    "triton.language.extra.libdevice",
)


class Triton(KernelLanguage):
    name = "triton"
    suffix = ".py"
    syntax = "python"
    kernel_noun = N_("a Triton kernel")

    def syntax_failure(self, path: Path) -> KernelFailure | None:
        from tutor.kernels import python_file

        return python_file.syntax_failure(path)

    def environment(self, cpu: bool) -> dict[str, str]:
        # Triton's library functions (tl.sum, ...) are made when triton is imported, interpreted
        # or compiled by what TRITON_INTERPRET says then.
        return {"TRITON_INTERPRET": "1"} if cpu else {}

    def preload(self, cpu: bool) -> None:
        import triton  # noqa: F401
        import triton.language  # noqa: F401

        import tutor.kernels.python_file  # noqa: F401
        import tutor.kernels.triton.errors  # noqa: F401
        import tutor.kernels.triton.interpreter  # noqa: F401
        import tutor.kernels.triton.launches  # noqa: F401

        for name in LAZY_IMPORTS:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)

    def prime(self) -> None:
        """CUDA's context on the current device (0.23 s on an H200), then one launch of a
        one-element kernel, which pays what every process pays once before its first kernel
        from the cache (0.4 s there: the key of Triton's own source, the backend, the driver's
        helpers). It is compiled into the course's cache the first time."""
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def _one(out):
            tl.store(out, 1)

        try:
            torch.cuda.init()
            out = torch.zeros(1, device="cuda", dtype=torch.int32)
            _one[(1,)](out)
            torch.cuda.synchronize()
            del out
        except Exception:  # noqa: BLE001 - any start failure: the run starts CUDA again and says why
            pass

    def select_backend(self, force_cpu: bool, restart_cold: Callable[[], None]) -> Backend:
        import torch

        if (
            not force_cpu
            and os.environ.get("TRITON_INTERPRET") != "1"
            and torch.cuda.is_available()
        ):
            return Backend(CUDA, "cuda", torch.cuda.get_device_name())
        os.environ["TRITON_INTERPRET"] = "1"
        if not _library_interpreted():
            # Forked from a warm process that imported triton for the GPU, which torch cannot
            # use after all: only a fresh Python imports triton for the CPU.
            restart_cold()
        # Make the interpreter run float arguments, libdevice and name-imported builtins as the
        # GPU does (tutor.kernels.triton.interpreter); it imports triton, now that the switch is on.
        from tutor.kernels.triton import interpreter

        interpreter.install()
        return Backend(CPU, "cpu", TRITON_INTERPRETER, bf16_truncates=True)

    def load(self, path: Path, module_name: str, host: Path | None = None) -> ModuleType:
        from tutor.kernels.python_file import import_file

        return import_file(path, module_name)

    def classify(self, exc: BaseException, name: str, path: Path) -> KernelFailure:
        from tutor.kernels.triton.errors import classify

        return classify(exc, name, path)

    def install_launch_hooks(self) -> None:
        from tutor.kernels.triton import launches

        launches.install()

    def recorded_launches(self) -> contextlib.AbstractContextManager[list[dict[str, Any]]]:
        from tutor.kernels.triton.facts import recorded_launches

        return recorded_launches()

    def half_precision_note(self) -> str:
        from tutor.kernels.triton import interpreter
        from tutor.lang.i18n import _

        return _(interpreter.BF16_ARITHMETIC_NOTE) if interpreter.installed() else ""

    def versions(self) -> dict[str, str | None]:
        try:
            import triton
        except ImportError:
            return {"triton": None}
        return {"triton": triton.__version__}


def _library_interpreted() -> bool:
    """Whether Triton's library kernels (tl.sum, ...) were made for the interpreter (or are not
    made yet): triton makes them when it is imported, for what TRITON_INTERPRET said then."""
    if "triton.language" not in sys.modules:
        return True
    import triton.language as tl

    return type(tl.sum).__name__ == "InterpretedFunction"


LANGUAGE = Triton()
