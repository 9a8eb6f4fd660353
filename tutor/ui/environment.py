"""What the app learns from the machine: the learner's editor, and the GPU kernels will run on.

No Textual and no torch here. The GPU's name comes from NVML (tutor.run.gpu: no CUDA, no torch,
a few milliseconds); only where NVML cannot be read but a GPU may be there does a child Python
import torch to ask, so the app process never pays for that import (the app must be
interactive within a second).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping

from tutor.lang.i18n import N_
from tutor.run.gpu import machine_has_gpu, nvml_gpus
from tutor.states import CUDA_ON_CPU, BackendName

CPU_LABEL = N_("CPU interpreter")  # translated where it is shown
CUDA_CPU_LABEL = N_("CPU (CUDA C++)")  # a CUDA C++ drill's kernels built for the CPU
CPU_BACKEND = BackendName.CPU
_PROBE = (
    "import torch; print(torch.cuda.get_device_name() if torch.cuda.is_available() else '', end='')"
)


# Editors tried, in order, when neither $VISUAL nor $EDITOR names one: Debian's `editor`
# alternative, then the two most machines have.
FALLBACK_EDITORS = ("editor", "nano", "vi")


def editor_command(
    env: Mapping[str, str] | None = None, which: Callable[[str], str | None] = shutil.which
) -> list[str] | None:
    """$VISUAL, else $EDITOR, split like a shell would, else the first of FALLBACK_EDITORS
    installed (`which` finds a program on the PATH); None when there is none."""
    env = os.environ if env is None else env
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            return shlex.split(value)
    for program in FALLBACK_EDITORS:
        found = which(program)
        if found:
            return [found]
    return None


def backend_label(backend: str, device_name: str) -> str:
    """How the status bar names a run's backend (from its session_start event)."""
    if backend == CPU_BACKEND or not backend:
        return CUDA_CPU_LABEL if device_name == CUDA_ON_CPU else CPU_LABEL
    return device_name or backend


def gpu_name(python: str = sys.executable, timeout: float = 60.0) -> str | None:
    """The name torch.cuda gives the first GPU, or None when kernels will run on the CPU."""
    named = nvml_gpus()
    if named is not None:
        return named[0] if named else None
    if not machine_has_gpu():
        return None
    try:
        done = subprocess.run(
            [python, "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None
