"""The GPUs of this machine as NVML sees them: no torch, no CUDA context, safe before a fork.

    names = nvml_gpus()        # ("NVIDIA H200",); () with none visible; None without NVML
    driver = nvml_driver()     # Driver("570.124.06", 12080), or None without NVML
    others = gpu_processes()   # [GpuProcess(pid, used_bytes), ...] on the visible GPUs
    others = other_processes() # ... but the tutor's own (its warm process's spare, its runs)

CUDA does not survive a fork once it has started in the parent, and merely asking the CUDA
runtime how many devices there are starts it. NVML (the library nvidia-smi uses) answers the
same question without starting CUDA, so the warm process can know there is a GPU, and the app
can name it in the status bar, while every run forked from the warm process still starts CUDA
for itself. This reads NVML through ctypes (torch's own NVML check does the same); nothing
here imports torch, nor anything outside the standard library (a remote host runs it before any
environment is set up there: tutor.remote).

`CUDA_VISIBLE_DEVICES` is honoured the way CUDA reads it for the common forms: unset means every
GPU; empty or starting with -1 means none; a list of indices picks those. Other forms (UUIDs)
keep every GPU: the name shown is then the first GPU's, which is right for the usual machine
with one kind of card.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

NVML_LIBRARY = "libnvidia-ml.so.1"
NVML_SUCCESS = 0
NAME_BUFFER = 96  # NVML_DEVICE_NAME_V2_BUFFER_SIZE
VERSION_BUFFER = 80  # NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
MAX_PROCESSES = 64  # the processes read per GPU: more than any shared card runs
T = TypeVar("T")


@dataclass(frozen=True)
class Driver:
    version: str  # "570.124.06"
    cuda: int  # the newest CUDA it runs, as NVML gives it: 12080 is 12.8

    @property
    def cuda_text(self) -> str:
        return f"{self.cuda // 1000}.{self.cuda % 1000 // 10}"


@dataclass(frozen=True)
class GpuProcess:
    pid: int  # as the driver sees it (0 when it is in another container)
    used_bytes: int  # GPU memory it holds (0 when the driver does not say)


class _ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_v1_t: the first two fields of them all
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


def _with_nvml(read: Callable[[Any], T]) -> T | None:
    """`read(nvml)` between NVML's init and shutdown; None when NVML cannot be read (no NVIDIA
    driver library on this machine)."""
    try:
        nvml = ctypes.CDLL(NVML_LIBRARY)
        if nvml.nvmlInit_v2() != NVML_SUCCESS:
            return None
    except (OSError, AttributeError):
        return None
    try:
        return read(nvml)
    finally:
        nvml.nvmlShutdown()


def _handles(nvml) -> list[tuple[str, ctypes.c_void_p]] | None:
    """Each GPU's name and NVML handle, every GPU of the machine."""
    count = ctypes.c_uint(0)
    if nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != NVML_SUCCESS:
        return None
    found = []
    for index in range(count.value):
        handle = ctypes.c_void_p()
        if nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) != NVML_SUCCESS:
            continue
        buffer = ctypes.create_string_buffer(NAME_BUFFER)
        if nvml.nvmlDeviceGetName(handle, buffer, NAME_BUFFER) == NVML_SUCCESS:
            found.append((buffer.value.decode("utf-8", "replace"), handle))
    return found


def _visible_handles(nvml) -> list[ctypes.c_void_p] | None:
    handles = _handles(nvml)
    if handles is None:
        return None
    names = tuple(str(i) for i in range(len(handles)))  # visible() picks by index
    picked = visible(names, os.environ.get("CUDA_VISIBLE_DEVICES"))
    return [handles[int(i)][1] for i in picked]


@cache
def nvml_gpus() -> tuple[str, ...] | None:
    """The names of the GPUs CUDA would see here, found through NVML; None when NVML cannot
    be read (no NVIDIA driver library on this machine)."""

    def read(nvml) -> tuple[str, ...] | None:
        handles = _handles(nvml)
        if handles is None:
            return None
        names = tuple(name for name, _ in handles)
        return visible(names, os.environ.get("CUDA_VISIBLE_DEVICES"))

    return _with_nvml(read)


def nvml_driver() -> Driver | None:
    """The NVIDIA driver's version and the newest CUDA it runs; None without NVML."""

    def read(nvml) -> Driver | None:
        buffer = ctypes.create_string_buffer(VERSION_BUFFER)
        cuda = ctypes.c_int(0)
        if nvml.nvmlSystemGetDriverVersion(buffer, VERSION_BUFFER) != NVML_SUCCESS:
            return None
        if nvml.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(cuda)) != NVML_SUCCESS:
            return None
        return Driver(buffer.value.decode("ascii", "replace"), cuda.value)

    return _with_nvml(read)


def gpu_processes() -> list[GpuProcess]:
    """The processes that hold a CUDA context on the GPUs CUDA would see here (compute and
    graphics both); [] without NVML, or when the driver will not say."""

    def read(nvml) -> list[GpuProcess]:
        found: dict[int, GpuProcess] = {}
        for handle in _visible_handles(nvml) or []:
            for name in (
                "nvmlDeviceGetComputeRunningProcesses",
                "nvmlDeviceGetGraphicsRunningProcesses",
            ):
                for process in _processes(getattr(nvml, name, None), handle):
                    found.setdefault(process.pid or -len(found) - 1, process)
        return list(found.values())

    return _with_nvml(read) or []


def _processes(function, handle) -> list[GpuProcess]:
    if function is None:
        return []
    count = ctypes.c_uint(MAX_PROCESSES)
    infos = (_ProcessInfo * MAX_PROCESSES)()
    # The v1 entry points fill the v1 record (pid, memory), which every driver still exports.
    if function(handle, ctypes.byref(count), infos) != NVML_SUCCESS:
        return []
    return [
        GpuProcess(int(info.pid), int(info.usedGpuMemory) if info.usedGpuMemory < 2**63 else 0)
        for info in infos[: count.value]
    ]


def visible(names: tuple[str, ...], setting: str | None) -> tuple[str, ...]:
    """The GPUs left by a CUDA_VISIBLE_DEVICES `setting` (None: unset)."""
    if setting is None:
        return names
    items = [item.strip() for item in setting.split(",")]
    if not items or not items[0] or items[0].startswith("-1"):
        return ()
    if all(item.isdigit() for item in items):
        picked = []
        for item in items:
            if int(item) >= len(names):
                break  # CUDA stops at the first index that does not exist
            picked.append(names[int(item)])
        return tuple(picked)
    return names


def machine_has_gpu() -> bool:
    """Whether an NVIDIA GPU may be here (cheap: no torch import, no CUDA started)."""
    found = nvml_gpus()
    if found is not None:
        return bool(found)
    # Without NVML's answer (no driver library on the path), the device node or nvidia-smi
    # still say a GPU may be there: let torch decide in the run.
    return shutil.which("nvidia-smi") is not None or Path("/dev/nvidia0").exists()


def other_processes() -> list[GpuProcess]:
    """The processes on the GPUs that are not the tutor's own: a warm process's spare run
    starts CUDA ahead of a request (tutor.run.zygote), and a run carries the run mark; whose
    times are shared with a bench is what the learner needs to hear."""
    return [process for process in gpu_processes() if not _tutors(process.pid)]


def _tutors(pid: int) -> bool:
    """Whether `pid` is a warm process (or its spare) or a run of the tutor's, from /proc; a
    process of another user's or another container's (pid 0) is not."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        environment = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return b"tutor.run.zygote" in command or b"\0TUTOR_RUN_ID=" in b"\0" + environment
