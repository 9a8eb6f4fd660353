"""Compile a learner's `.cu` file with NVRTC, NVIDIA's runtime compiler: no CUDA toolkit needed.

    compiled = compile_cubin(source, path, ["rms_norm_kernel"], arch="sm_90")
    compiled.cubin, compiled.names["rms_norm_kernel"], compiled.facts["rms_norm_kernel"]

NVRTC comes from the `nvidia-cuda-nvrtc` wheel through the cuda-python bindings; the CUDA
headers a drill includes (`cuda_bf16.h`) from `nvidia-cuda-runtime`'s or a toolkit's include
folder. It compiles for a GPU's architecture with no GPU present, so a CPU-only machine gets the
compile errors (file:line) and the compile facts the coach shows on a GPU: registers, spills,
shared memory and barriers of each kernel, from ptxas's report. Cached by a hash of the source,
the options and the compiler's version.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.kernels.cuda.cpu.build import ToolMissing, cache_root
from tutor.kernels.errors import excerpt
from tutor.lang.i18n import _

DEFAULT_ARCH = "sm_90"  # for compile errors and facts where there is no GPU to ask (Hopper)
# What every learner file gets before its first line on the GPU: the starter's TODO_KERNEL marker
# (on the CPU: tutor_cuda.h), which records the line of a kernel that is not written yet.
PRELUDE_NAME = "tutor_nvrtc.h"
PRELUDE = """#pragma once
__device__ int tutor_todo_line;
#define TODO_KERNEL(what) (tutor_todo_line = __LINE__)
"""
_ERROR = re.compile(r"^(?P<file>[^()\n]+)\((?P<line>\d+)\): (?:catastrophic )?error: (?P<msg>.*)$")
_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


@dataclass(frozen=True)
class Compiled:
    cubin: bytes
    names: dict[str, str]  # kernel -> its lowered (mangled) name in the cubin
    facts: dict[str, dict[str, Any]]  # kernel -> registers, spills, shared memory, barriers
    arch: str


def available() -> bool:
    try:
        _nvrtc()
    except ToolMissing:
        return False
    return True


@cache
def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        raise ToolMissing(
            _(
                "NVRTC is not installed (CUDA C++ drills compile with it on a GPU): "
                "pip install cuda-bindings nvidia-cuda-nvrtc nvidia-cuda-runtime"
            )
        ) from None
    return nvrtc


def version() -> str | None:
    try:
        err, major, minor = _nvrtc().nvrtcVersion()
    except ToolMissing:
        return None
    return f"{major}.{minor}"


@cache
def include_dirs() -> tuple[str, ...]:
    """Where cuda_bf16.h and its kin are: the runtime wheel's include folder, or a toolkit's."""
    found = []
    try:
        import nvidia

        for root in nvidia.__path__:
            found += [str(p.parent) for p in Path(root).glob("*/include/cuda_bf16.h")]
    except ImportError:
        pass
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and (Path(home) / "include" / "cuda_bf16.h").is_file():
            found.append(str(Path(home) / "include"))
    return tuple(dict.fromkeys(found))


def compile_cubin(source: str, path: Path, kernels: list[str], arch: str) -> Compiled:
    """The cubin of `source` (the file at `path`) for `arch` ("sm_90"), or a KernelFailure."""
    nvrtc = _nvrtc()
    options = [
        f"-arch={arch}",
        "-std=c++17",
        "-lineinfo",
        "-default-device",
        "--ptxas-options=-v",
        f"-include={PRELUDE_NAME}",
        *(f"-I{d}" for d in include_dirs()),
    ]
    key = hashlib.sha256(
        "\0".join([source, path.name, *kernels, *options, PRELUDE, version() or ""]).encode()
    ).hexdigest()[:24]
    stored = cache_root() / "nvrtc" / key
    if (stored / "meta.json").is_file() and (stored / "kernel.cubin").is_file():
        meta = json.loads((stored / "meta.json").read_text(encoding="utf-8"))
        return Compiled((stored / "kernel.cubin").read_bytes(), meta["names"], meta["facts"], arch)
    err, program = nvrtc.nvrtcCreateProgram(
        source.encode(), path.name.encode(), 1, [PRELUDE.encode()], [PRELUDE_NAME.encode()]
    )
    try:
        for name in kernels:
            nvrtc.nvrtcAddNameExpression(program, name.encode())
        (result,) = nvrtc.nvrtcCompileProgram(program, len(options), [o.encode() for o in options])
        log = _log(nvrtc, program)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise _failure(log, path)
        err, size = nvrtc.nvrtcGetCUBINSize(program)
        cubin = b" " * size
        nvrtc.nvrtcGetCUBIN(program, cubin)
        names = {}
        for name in kernels:
            err, lowered = nvrtc.nvrtcGetLoweredName(program, name.encode())
            names[name] = lowered.decode()
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    facts = _facts(log, names)
    stored.mkdir(parents=True, exist_ok=True)
    (stored / "kernel.cubin").write_bytes(cubin)
    (stored / "meta.json").write_text(
        json.dumps({"names": names, "facts": facts}), encoding="utf-8"
    )
    return Compiled(cubin, names, facts, arch)


def _log(nvrtc: Any, program: Any) -> str:
    err, size = nvrtc.nvrtcGetProgramLogSize(program)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(program, log)
    return log.decode(errors="replace").rstrip("\0 ")


def _failure(log: str, path: Path) -> KernelFailure:
    for raw in log.splitlines():
        found = _ERROR.match(raw.strip())
        if found and Path(found["file"]).name == path.name:
            line = int(found["line"])
            return KernelFailure(
                dx.COMPILE_ERROR,
                _("{file}:{line}: NVRTC says: {error}").format(
                    file=path.name, line=line, error=found["msg"].strip()
                ),
                excerpt(path, line),
                line=line,
            )
    first = next((ln.strip() for ln in log.splitlines() if "error" in ln), log.strip()[:300])
    return KernelFailure(
        dx.COMPILE_ERROR, _("{file}: NVRTC says: {error}").format(file=path.name, error=first)
    )


def _facts(log: str, names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each kernel's registers, spills, shared memory and barriers, from ptxas's report."""
    by_lowered = {lowered: name for name, lowered in names.items()}
    facts: dict[str, dict[str, Any]] = {}
    current = None
    for line in log.splitlines():
        entry = _ENTRY.search(line)
        if entry:
            current = by_lowered.get(entry.group(1))
            if current:
                facts[current] = {}
            continue
        if current is None:
            continue
        spills = _SPILLS.search(line)
        if spills:
            facts[current]["stack"] = int(spills.group(1))
            facts[current]["spill_stores"] = int(spills.group(2))
            facts[current]["spill_loads"] = int(spills.group(3))
        used = _USED.search(line)
        if (
            used
        ):  # "Used 32 registers, used 1 barriers, 8 bytes cumulative stack size, 128 bytes smem"
            barriers, smem = _BARRIERS.search(line), _SMEM.search(line)
            facts[current]["n_regs"] = int(used.group(1))
            facts[current]["barriers"] = int(barriers.group(1)) if barriers else 0
            facts[current]["shared"] = int(smem.group(1)) if smem else 0
    return facts
