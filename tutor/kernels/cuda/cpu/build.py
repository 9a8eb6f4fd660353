"""Build a learner's `.cu` file into a program that runs its kernels on the CPU.

The file is compiled by the system C++ compiler against the tutor's own CUDA-on-CPU header
(tutor_cuda.h) with a small `main` (tutor_main.h) that runs one launch read from a file. Three
builds, each cached by a hash of everything that goes into it:

- `run`: every CUDA thread a fiber, run in order from one sync point to the next: the same
  output on every run, and a barrier or shuffle that not every thread reaches is named;
- `races`: every CUDA thread an OS thread, built with ThreadSanitizer;
- `memory`: the same, with AddressSanitizer (its __shared__ arrays are plain statics, which it
  fences: a section of their own would hide them from it).

A compile error is a KernelFailure naming the learner's file and line; a compiler or a sanitizer
this machine lacks is a ToolMissing saying what to install.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from tutor.course import diagnoses as dx
from tutor.kernels.base import KernelFailure
from tutor.kernels.errors import excerpt
from tutor.lang.i18n import _

HERE = Path(__file__).resolve().parent
COMMON_FLAGS = ("-std=c++17", "-g", "-w", "-pthread")
VARIANTS = {
    "run": ("-O1", "-DTUTOR_POISON_SHARED"),
    "races": ("-O1", "-DTUTOR_THREADS", "-DTUTOR_POISON_SHARED", "-fsanitize=thread"),
    "memory": ("-O0", "-DTUTOR_THREADS", "-fsanitize=address", "-fno-omit-frame-pointer"),
}
BUILD_TIMEOUT_S = 180.0
# `extern __shared__ float row[];`: dynamic shared memory, sized by the launch. On the CPU it is
# the launch's buffer (tutor::dynamic_shared), declared on the same line so lines stay put.
_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+__shared__\s+((?:alignas\s*\(\s*\d+\s*\)\s*|__align__\s*\(\s*\d+\s*\)\s*)?)"
    r"([A-Za-z_][\w:<>\s]*?)\s+([A-Za-z_]\w*)\s*\[\s*\]\s*;"
)
# A compiler's `file:line:col: error: ...`, or the linker's `file:line: undefined reference to`.
_ERROR = re.compile(
    r"^(?:.*?: )?(?P<file>[^:\s]+):(?P<line>\d+):(?:\d+:)?\s*"
    r"(?:(?:fatal )?error:\s*(?P<msg>.*)|(?P<link>undefined reference to .*))$"
)


class ToolMissing(Exception):
    """The machine lacks a compiler or a sanitizer a build needs; the message says how to get it."""


def cache_root() -> Path:
    """The course's CUDA cache (TUTOR_CUDA_CACHE, set by the runner), else the user's."""
    named = os.environ.get("TUTOR_CUDA_CACHE")
    if named:
        return Path(named)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kernel-drills-tutor"


@cache
def compiler() -> str:
    """The C++ compiler: $CXX, else the first of c++, g++, clang++ on the PATH."""
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)  # type: ignore[return-value]
    raise ToolMissing(
        _(
            "no C++ compiler found (CUDA C++ drills run on the CPU through one): install one, "
            "e.g. `sudo apt-get install g++` or, on macOS, `xcode-select --install`"
        )
    )


def translation_unit(source: str, file_name: str, kernels: list[str]) -> str:
    """The C++ the learner's file becomes: its text at its own line numbers, then `main` and
    one registration per kernel."""
    text = _DYNAMIC_SHARED.sub(
        lambda m: f"{m.group(2)}* {m.group(3)} = ({m.group(2)}*)::tutor::dynamic_shared();", source
    )
    registered = "".join(f"TUTOR_KERNEL({name})\n" for name in kernels)
    main = '#line 1 "tutor_main.h"\n#include "tutor_main.h"\n'
    return f'#line 1 "{file_name}"\n{text}\n{main}{registered}'


def build(source: str, path: Path, kernels: list[str], variant: str) -> Path:
    """The program for `variant` of the learner's file at `path` (its text `source`)."""
    unit = translation_unit(source, path.name, kernels)
    flags = [*COMMON_FLAGS, *VARIANTS[variant]]
    program = cache_root() / "cpu" / _key(unit, *flags) / variant
    if program.is_file():
        return program
    program.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tutor-cu-") as tmp:
        unit_file = Path(tmp) / f"{path.stem}.cpp"
        unit_file.write_text(unit, encoding="utf-8")
        built = Path(tmp) / "program"
        precompiled = _precompiled_header(flags)
        command = [
            compiler(),
            *flags,
            *(["-I", str(precompiled)] if precompiled else []),
            "-I",
            str(HERE),
            "-I",
            str(HERE / "include"),
            "-include",
            "tutor_cuda.h",
            str(unit_file),
            "-o",
            str(built),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise KernelFailure(
                dx.COMPILE_ERROR,
                _("{file}: the C++ compiler did not finish within {seconds:.0f} s").format(
                    file=path.name, seconds=BUILD_TIMEOUT_S
                ),
            ) from None
        if done.returncode != 0:
            raise _failure(done.stderr, path, variant)
        # Atomic: another run may build the same program at the same time.
        os.replace(built, program)
    return program


def _failure(log: str, path: Path, variant: str) -> Exception:
    """The first error in the learner's own file, else what stopped the build."""
    for raw in log.splitlines():
        found = _ERROR.match(raw)
        if found and Path(found["file"]).name == path.name:
            line = int(found["line"])
            return KernelFailure(
                dx.COMPILE_ERROR,
                _("{file}:{line}: the C++ compiler says: {error}").format(
                    file=path.name, line=line, error=(found["msg"] or found["link"]).strip()
                ),
                excerpt(path, line),
                line=line,
            )
    sanitizer = {"races": "ThreadSanitizer", "memory": "AddressSanitizer"}.get(variant)
    if sanitizer and re.search(r"tsan|asan|sanitize", log, re.I):
        return ToolMissing(
            _(
                "{sanitizer} is not available to {compiler} here (the deep check needs it): "
                "install its runtime, e.g. `sudo apt-get install libtsan2 libasan8`"
            ).format(sanitizer=sanitizer, compiler=Path(compiler()).name)
        )
    # The first line that says "error" names the cause ("fatal error: x.h: No such file");
    # the last line ("compilation terminated.") only says that it stopped.
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    cause = next((ln for ln in lines if re.search(r"\berror\b", ln)), lines[-1] if lines else "")
    return KernelFailure(
        dx.COMPILE_ERROR,
        _("{file}: the C++ build failed: {error}").format(file=path.name, error=cause),
    )


def _precompiled_header(flags: list[str]) -> Path | None:
    """A folder holding tutor_cuda.h precompiled for `flags` (made once for each set of flags,
    header and compiler), else None where the compiler cannot make one.

    The compiler looks for `tutor_cuda.h.gch` in each include folder before the header itself
    and takes it only if it was made with the same flags, else reads the header as text: a
    stale or foreign file costs time, never a wrong build. It saves 0.7-1.0 s of each 2.2-2.8 s
    build (g++ 12), every time a learner saves a CUDA C++ file on the CPU."""
    folder = cache_root() / "pch" / _key(*flags)
    made = folder / "tutor_cuda.h.gch"
    if made.is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".tutor_cuda.h.gch.{os.getpid()}"
    command = [
        compiler(),
        *flags,
        "-x",
        "c++-header",
        "-I",
        str(HERE / "include"),
        str(HERE / "tutor_cuda.h"),
        "-o",
        str(partial),
    ]
    try:
        done = subprocess.run(command, capture_output=True, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is None or done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        return None
    os.replace(partial, made)  # atomic: another build may make the same one at the same time
    return folder


def _key(*parts: str) -> str:
    """The cache key of what `parts` build into with this compiler and this header."""
    return hashlib.sha256(
        "\0".join([*parts, compiler(), _header_text(), _compiler_version()]).encode()
    ).hexdigest()[:24]


@cache
def _header_text() -> str:
    return "".join(
        p.read_text(encoding="utf-8")
        for p in sorted([*HERE.glob("*.h"), *(HERE / "include").glob("*.h")])
    )


@cache
def _compiler_version() -> str:
    try:
        return subprocess.run(
            [compiler(), "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
