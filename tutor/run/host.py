"""Where a run starts: this machine, or another one that answers the same questions.

    runner = Runner(catalogue)                    # LOCAL: the supervisor starts the keeper here
    runner = Runner(catalogue, host=remote)       # tutor.remote.RemoteHost: over ssh

Everything that starts a run (the runner, the test lister, the bench) asks its host, and nothing
else: `supervise` starts the run as tutor.run.supervisor.supervise does (same arguments, same
`Ended`), `has_gpu` and `runs_on_cpu` say where kernels go, `memory_limit` is the run's default
limit there, `warm` is the warm process a run may be forked from there, and `cannot_run` says
why no run can start at all. A remote host (tutor.remote) answers each from the machine at the
other end of an ssh connection, so the runs, their limits and their sealed events are the same
wherever they run.

`returns` names files the run writes for the caller to read once it ended (the bench child's
report): here they are already where the caller looks; a remote host copies them back.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from tutor.lang.i18n import _
from tutor.run.gpu import machine_has_gpu, nvml_gpus
from tutor.run.supervisor import Ended, default_memory_limit, supervise
from tutor.run.warm import runs_on_cpu

# What a run imports on this machine before any learner code: without them no run can start.
KERNEL_MODULES = ("torch", "triton")


def missing_modules(names: Sequence[str] = KERNEL_MODULES) -> list[str]:
    """The modules of `names` this Python cannot import (found without importing them)."""
    return [name for name in names if not _findable(name)]


def _findable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def no_local_runs(missing: Sequence[str]) -> str:
    """Why kernels cannot run on this machine, and how to run them on a GPU over ssh."""
    return _(
        "this machine cannot import {modules} (Triton has no wheel for macOS or Windows), so "
        "no kernel runs here. Run them on a machine with an NVIDIA GPU that you reach over "
        "ssh: `tutor --on user@host` (the app) or `tutor --on user@host check t1`; or, on "
        "Linux, `pip install torch` for the CPU interpreter."
    ).format(modules=", ".join(missing))


class LocalHost:
    """This machine: runs start under the local supervisor (tutor.run.supervisor)."""

    name = ""  # "" is this machine; a remote host's is its ssh name
    warm = None  # this machine's warm process is the caller's (tutor.run.warm.WarmPool)

    def supervise(self, cmd: list[str], *, returns: Sequence[Path] = (), **options) -> Ended:
        return supervise(cmd, **options)

    def has_gpu(self) -> bool:
        return machine_has_gpu()

    def runs_on_cpu(self, force_cpu: bool) -> bool:
        """Whether a run's kernels go to the CPU interpreter: asked for, or no GPU here."""
        return runs_on_cpu(force_cpu)

    def gpu_names(self) -> tuple[str, ...] | None:
        return nvml_gpus()

    def memory_limit(self) -> int:
        return default_memory_limit()

    def cannot_run(self) -> str:
        """Why no run can start here ("" when runs can): torch or triton not installed."""
        missing = missing_modules()
        return no_local_runs(missing) if missing else ""


LOCAL = LocalHost()
