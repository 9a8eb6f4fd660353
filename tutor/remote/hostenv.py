"""The host's side of first contact: what the host has, and the Python environment the runs use.

    facts = host_facts()                                   # Python, GPUs, driver, memory
    check_host(facts, cpu=False)                           # Refused: no GPU
    python = ensure_env(folder, requirements, index, say)  # pip, with progress; once per version
    check_python(python_facts(), facts, cpu=False)         # --python: what it lacks, or Refused

A new environment is a virtual environment in the host's cache folder for this version of the
tutor, with torch (and Triton) built for a CUDA the host's driver runs: `torch_index` picks it
from what NVML says the driver supports. It is made once; a marker file records what was
installed, so a second contact (or another course) finds it ready, and an install cut short
(the connection dropped) is finished by the next one. Two tutors setting up one host at once
take turns (a lock file). A tutor that goes while pip runs (Ctrl-C, a dropped connection) ends
pip with it.

Standard library only: this runs before the environment exists (tutor.remote.protocol says why).
"""

from __future__ import annotations

import json
import os
import platform
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from tutor.run.gpu import machine_has_gpu, nvml_driver, nvml_gpus, other_processes

TORCH_INDEX = "https://download.pytorch.org/whl"
# The newest build of torch each driver runs, newest first (the driver's CUDA, as NVML says it).
TORCH_BUILDS = ((12080, "cu128"), (12060, "cu126"))
# CUDA's minor version compatibility runs a 12.x build on any 12.x driver (525 and later);
# below it no torch the tutor supports (2.8+) runs.
OLDEST_CUDA = 12000
OLDEST_PYTHON = (3, 10)
# What a run imports, by module name (the packages are in the requirements).
RUN_MODULES = ("torch", "triton", "numpy", "pytest", "yaml", "psutil")
MARKER = "tutor-ready.json"
PIP_SAY_EVERY_S = 2.0  # pip's download progress, at most this often


class Refused(Exception):
    """The host cannot run the tutor's kernels; `reason` and `facts` go back to the tutor,
    which says it in the learner's language (tutor.remote.client)."""

    def __init__(self, reason: str, **facts: Any) -> None:
        super().__init__(reason)
        self.reason, self.facts = reason, facts


Say = Callable[[str, str], None]  # (step, detail): tutor.remote.protocol.Progress


def host_facts() -> dict[str, Any]:
    driver = nvml_driver()
    return {
        "python": sys.executable,
        "python_version": platform.python_version(),
        "gpus": list(nvml_gpus() or ()),
        "has_gpu": machine_has_gpu(),
        "driver": driver.version if driver else "",
        "cuda": driver.cuda_text if driver else "",
        "cuda_number": driver.cuda if driver else 0,
        "memory": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
        "busy": [[p.pid, p.used_bytes] for p in other_processes()],
        "platform": f"{platform.system()} {platform.machine()}",
    }


def check_host(facts: dict[str, Any], *, cpu: bool) -> None:
    """Refused when the host has no GPU and the CPU interpreter was not asked for."""
    if not cpu and not facts["has_gpu"]:
        raise Refused("no-gpu", platform=facts["platform"])


def torch_index(facts: dict[str, Any], *, cpu: bool) -> str:
    """Where pip finds a torch the host's driver runs; Refused when the driver is too old."""
    if cpu and not facts["has_gpu"]:
        return f"{TORCH_INDEX}/cpu"
    cuda = facts["cuda_number"]
    if not cuda:  # a GPU without NVML's answer: the newest build, and the run will say
        return f"{TORCH_INDEX}/{TORCH_BUILDS[0][1]}"
    if cuda < OLDEST_CUDA:
        raise Refused("driver-too-old", driver=facts["driver"], cuda=facts["cuda"], least="12.0")
    for least, build in TORCH_BUILDS:
        if cuda >= least:
            return f"{TORCH_INDEX}/{build}"
    return f"{TORCH_INDEX}/{TORCH_BUILDS[-1][1]}"


def python_facts() -> dict[str, Any]:
    """What this Python has of what a run imports, and the CUDA its torch was built for (read
    from torch/version.py, without importing torch)."""
    missing = [name for name in RUN_MODULES if find_spec(name) is None]
    torch_cuda = ""
    spec = find_spec("torch") if "torch" not in missing else None
    if spec is not None and spec.origin:
        version = Path(spec.origin).with_name("version.py")
        try:
            found = re.search(r"^cuda\b[^=]*=\s*['\"]([\d.]+)['\"]", version.read_text(), re.M)
        except OSError:
            found = None
        torch_cuda = found.group(1) if found else ""
    return {"python": sys.executable, "missing": missing, "torch_cuda": torch_cuda}


def check_python(found: dict[str, Any], facts: dict[str, Any], *, cpu: bool) -> None:
    """Refused when the Python lacks a module a run imports, or its torch cannot use the GPU."""
    if found["missing"]:
        raise Refused("python-lacks", python=found["python"], missing=found["missing"])
    if cpu or not facts["has_gpu"]:
        return
    if not found["torch_cuda"]:
        raise Refused("torch-cpu-only", python=found["python"])
    built = _cuda_number(found["torch_cuda"])
    if facts["cuda_number"] and built // 1000 > facts["cuda_number"] // 1000:
        raise Refused(
            "driver-too-old",
            driver=facts["driver"],
            cuda=facts["cuda"],
            least=found["torch_cuda"],
            python=found["python"],
        )


def _cuda_number(text: str) -> int:
    major, _, minor = text.partition(".")
    try:
        return int(major) * 1000 + int(minor or 0) * 10
    except ValueError:
        return 0


def ensure_env(
    folder: Path,
    requirements: list[str],
    index: str,
    pip_args: list[str],
    say: Say,
) -> str:
    """The Python of the environment in `folder`, made and filled first if it is not ready."""
    python = folder / "bin" / "python"
    wanted = {
        "requirements": requirements,
        "torch_index": index,
        "pip_args": pip_args,
        "python": platform.python_version(),
    }
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "setup.lock", "a") as lock:
        import fcntl  # the host is Linux

        fcntl.flock(lock, fcntl.LOCK_EX)  # another tutor setting this host up: its turn first
        if _marker(folder) == wanted and python.exists():
            return str(python)
        if not python.exists():
            say("venv", str(folder))
            made = subprocess.run(
                [sys.executable, "-m", "venv", str(folder)],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                check=False,
            )
            if made.returncode != 0:
                tail = (made.stdout + made.stderr).strip().splitlines()[-3:]
                raise Refused("no-venv", python=sys.executable, output="\n".join(tail))
        with_torch = [r for r in requirements if _name(r) in ("torch", "triton")]
        others = [r for r in requirements if r not in with_torch]
        say("pip-upgrade", "")
        try:
            _pip(python, ["--upgrade", "pip"], pip_args, say, bar="off")
        except Refused:
            pass  # an older pip installs as well, without its download progress
        bar = "raw" if _pip_version(python) >= (24, 1) else "off"
        if with_torch:
            say("torch", index)
            _pip(python, ["--index-url", index, *with_torch], pip_args, say, bar)
        if others:
            say("packages", " ".join(others))
            _pip(python, others, pip_args, say, bar)
        (folder / MARKER).write_text(json.dumps(wanted), encoding="utf-8")
        say("ready", str(python))
        return str(python)


def _marker(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()


def _pip_version(python: Path) -> tuple[int, ...]:
    """pip's version in the environment: `--progress-bar raw` (a line per step of a download)
    came with 24.1."""
    done = subprocess.run(
        [str(python), "-m", "pip", "--version"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.match(r"pip (\d+)\.(\d+)", done.stdout)
    return (int(found[1]), int(found[2])) if found else (0,)


def _pip(python: Path, args: list[str], pip_args: list[str], say: Say, bar: str) -> None:
    """`python -m pip install ARGS`, each line it prints said as it comes (its download
    progress at most every PIP_SAY_EVERY_S); Refused with its last lines when it fails.

    The tutor sends nothing while the host sets itself up, so input to read means the tutor
    is gone (Ctrl-C, a dropped connection): pip is ended with its whole group, and so is this
    process, leaving nothing running on the host."""
    command = [str(python), "-m", "pip", "install", "--progress-bar", bar, *pip_args, *args]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONUNBUFFERED="1"),
        start_new_session=True,
    )
    assert process.stdout is not None
    tail: list[str] = []
    said = 0.0
    for line in _lines_while_watched(process):
        tail = [*tail[-14:], line]
        progress = re.fullmatch(r"Progress (\d+) of (\d+)", line)
        if progress is None:
            say("pip", line)
        elif time.monotonic() - said > PIP_SAY_EVERY_S or progress[1] == progress[2]:
            said = time.monotonic()
            done, total = int(progress[1]), int(progress[2])
            say("download", f"{100 * done // max(total, 1)}% of {total / 2**20:.0f} MB")
    if process.wait() != 0:
        raise Refused("pip-failed", command=" ".join(command[3:]), output="\n".join(tail))


def _lines_while_watched(process: subprocess.Popen, watched: int = 0) -> Iterator[str]:
    """The lines `process` prints, as they come, until it closes its output; when `watched`
    (the tutor's end of the session) has input, the process's group is killed and this
    process ends."""
    assert process.stdout is not None
    output, partial = process.stdout.fileno(), b""
    while True:
        ready, _, _ = select.select([output, watched], [], [])
        if watched in ready:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise SystemExit(0)
        chunk = os.read(output, 1 << 16)
        if not chunk:
            break
        *lines, partial = (partial + chunk).split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace").strip()
            if line:
                yield line
    if partial.strip():
        yield partial.decode("utf-8", "replace").strip()
