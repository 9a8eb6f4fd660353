"""The GPUs of this machine as NVML sees them: no torch, no CUDA context, safe before a fork.

    names = nvml_gpus()        # ("NVIDIA H200",); () with none visible; None without NVML

CUDA does not survive a fork once it has started in the parent, and merely asking the CUDA
runtime how many devices there are starts it. NVML (the library nvidia-smi uses) answers the
same question without starting CUDA, so the warm process can know there is a GPU, and the app
can name it in the status bar, while every run forked from the warm process still starts CUDA
for itself. This reads NVML through ctypes (torch's own NVML check does the same); nothing
here imports torch.

`CUDA_VISIBLE_DEVICES` is honoured the way CUDA reads it for the common forms: unset means every
GPU; empty or starting with -1 means none; a list of indices picks those. Other forms (UUIDs)
keep every GPU: the name shown is then the first GPU's, which is right for the usual machine
with one kind of card.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from functools import cache
from pathlib import Path

NVML_LIBRARY = "libnvidia-ml.so.1"
NVML_SUCCESS = 0
NAME_BUFFER = 96  # NVML_DEVICE_NAME_V2_BUFFER_SIZE


@cache
def nvml_gpus() -> tuple[str, ...] | None:
    """The names of the GPUs CUDA would see here, found through NVML; None when NVML cannot
    be read (no NVIDIA driver library on this machine)."""
    try:
        nvml = ctypes.CDLL(NVML_LIBRARY)
        if nvml.nvmlInit_v2() != NVML_SUCCESS:
            return None
    except (OSError, AttributeError):
        return None
    try:
        count = ctypes.c_uint(0)
        if nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != NVML_SUCCESS:
            return None
        names = []
        for index in range(count.value):
            handle = ctypes.c_void_p()
            if nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) != NVML_SUCCESS:
                continue
            buffer = ctypes.create_string_buffer(NAME_BUFFER)
            if nvml.nvmlDeviceGetName(handle, buffer, NAME_BUFFER) == NVML_SUCCESS:
                names.append(buffer.value.decode("utf-8", "replace"))
        return visible(tuple(names), os.environ.get("CUDA_VISIBLE_DEVICES"))
    finally:
        nvml.nvmlShutdown()


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
