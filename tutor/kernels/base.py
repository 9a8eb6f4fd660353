"""What the tutor needs of a kernel language, in one interface.

A learner's kernel file is built, loaded, run, observed and timed only through a
`KernelLanguage`: the warm process preloads each language (`preload`, and `prime` in a spare
that will run on the GPU), a run picks where kernels go (`select_backend`) and loads the file
(`load`), each call's errors are named (`classify`) and its launches counted (the launch log,
tutor.kernels.launches, fed by the language's hooks), and the bench reads the compile facts of
each launch (`recorded_launches`). Triton is the first language (tutor.kernels.triton); a
second one is a package beside it (docs/DESIGN.md, "A kernel language").
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tutor.states import BackendName

CPU = BackendName.CPU
CUDA = BackendName.CUDA


@dataclass(frozen=True)
class Backend:
    """Where a run's kernels go: the GPU, or the CPU (the language's stand-in for it)."""

    name: str  # CPU or CUDA
    device: str  # the torch device tests allocate on
    device_name: str
    # fp32 -> bf16 drops the low bits here (Triton's interpreter) instead of rounding to
    # nearest even as a GPU does: references must round the same way (harness.round_to).
    bf16_truncates: bool = False

    @property
    def is_cpu(self) -> bool:
        return self.name == CPU


class KernelFailure(Exception):
    """The learner's kernel file failed to build, load or run, named by a diagnosis id
    (tutor.course.diagnoses), with the line of the learner's file where it can be found."""

    def __init__(self, diagnosis: str, message: str, details: str = "", line: int | None = None):
        super().__init__(message)
        self.diagnosis = diagnosis
        self.message = message
        self.details = details
        self.line = line


class KernelLanguage(ABC):
    """One kernel language: its files, how they are built and run, and what they say."""

    name: str  # the catalogue's name for it (drills.yaml `language:`, tutor.course.catalogue)
    suffix: str  # of the learner's file
    syntax: str  # the code view's highlighting
    kernel_noun: str  # how a message names one of its kernels ("a Triton kernel")

    def environment(self, cpu: bool) -> dict[str, str]:
        """What a process must have in its environment before torch or this language is first
        imported, to run kernels on the CPU (`cpu`) or the GPU."""
        return {}

    @abstractmethod
    def preload(self, cpu: bool) -> None:
        """In the warm process, before any fork and after `environment` is set: import what
        every run of this language needs, starting no CUDA."""

    @abstractmethod
    def prime(self) -> None:
        """In a forked spare that will run on the GPU: start CUDA and the launch path, as the
        run's first kernel would. A failure is left for the run to meet and report."""

    @abstractmethod
    def select_backend(self, force_cpu: bool, restart_cold: Callable[[], None]) -> Backend:
        """In a run, before the learner's file loads: the GPU when there is one torch can use and
        the CPU was not asked for, else the CPU. Where this process imported the language for
        the other backend (a warm process that found a GPU torch cannot use), `restart_cold()`
        starts the run again in a fresh Python when it can, and returns when it cannot."""

    @abstractmethod
    def load(self, path: Path, module_name: str, host: Path | None = None) -> ModuleType:
        """The learner's file built and loaded as a module whose functions the tests call.
        `host`: the drill's host code, for a language whose learner files hold only kernels
        (drills/host/<stem>.py). Errors in the file are KernelFailures (syntax, build, import)."""

    def syntax_failure(self, path: Path) -> KernelFailure | None:
        """In the tutor's own process, before any run: the learner's file's syntax error, found
        without running a line of it (a run would take seconds to report it), else None."""
        return None

    @abstractmethod
    def classify(self, exc: BaseException, name: str, path: Path) -> KernelFailure:
        """Name the error a call of the learner's function `name` raised, and where in `path`."""

    @abstractmethod
    def install_launch_hooks(self) -> None:
        """Make every launch of this language's kernels in this process a record of the launch
        log (tutor.kernels.launches); idempotent."""

    @contextlib.contextmanager
    def recorded_launches(self) -> Iterator[list[dict[str, Any]]]:
        """On the GPU, in the bench: the compile and launch facts of every launch made inside
        the block (registers, spills, shared memory, grid, ...), appended to the yielded list."""
        yield []

    def deep_check(  # noqa: B027 - a language without sanitizers has nothing to add
        self, module: ModuleType, function: str, args: tuple, kwargs: dict
    ) -> None:
        """Call `function` of a loaded module again where races and out-of-bounds accesses are
        seen (CUDA C++'s sanitizer builds), raising a KernelFailure for the first one found;
        nothing for a language that has no such check."""

    def half_precision_note(self) -> str:
        """A paragraph for a failed bf16 comparison when the backend does 16-bit arithmetic
        unlike the GPU (the Triton interpreter does), else ""."""
        return ""

    def versions(self) -> dict[str, str | None]:
        """The library versions a run reports beside torch's ({"triton": "3.6.0"})."""
        return {}
