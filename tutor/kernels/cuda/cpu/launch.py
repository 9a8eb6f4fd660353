"""Run one launch of a learner's kernel in its CPU program (tutor.kernels.cuda.cpu.build).

Each tensor argument's whole storage travels to the program as one buffer of exactly its size
and comes back after the launch, so the kernel reads and writes the caller's tensors as on a
GPU, and a sanitizer sees an access past any of them. What the launch found comes back too: the
scheduler's findings (a divergent barrier, a shuffle's mask, a block that cannot go on) and the
sanitizer's report on standard error.
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

LAUNCH_TIMEOUT_S = 60.0  # one launch of a test-sized kernel takes well under a second
DEADLOCK_EXIT = 3  # the program's exit code when a block cannot go on (tutor_cuda.h)
MAX_PRINTED = 20_000  # of a kernel's printf: every thread printing a line adds up fast


@dataclass(frozen=True)
class Finding:
    kind: str  # "barrier-divergent", "shuffle-mask", "deadlock"
    line: int
    text: str


@dataclass
class Ran:
    """How one launch ended: its exit code, its findings, the sanitizer's words."""

    returncode: int
    findings: list[Finding] = field(default_factory=list)
    stderr: str = ""
    timed_out: bool = False
    stdout: str = ""  # what the kernel printed (printf)


def run(
    program: Path,
    kernel: str,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared: int,
    args: list[tuple[str, Any]],
    env: dict[str, str] | None = None,
) -> Ran:
    """Launch `kernel` once; `args` are ("ptr", cpu tensor) or ("value", packed bytes)."""
    storages: dict[int, torch.Tensor] = {}  # data_ptr -> the storage as bytes
    lines = []
    for kind, value in args:
        if kind == "ptr":
            raw = _storage_bytes(value)
            storages.setdefault(raw.data_ptr(), raw)
            index = list(storages).index(raw.data_ptr())
            lines.append(f"arg ptr {index} {value.storage_offset() * value.element_size()}")
        else:
            lines.append(f"arg value {len(value)} {value.hex() or '00'}")
    header = [
        f"kernel {kernel}",
        "grid {} {} {}".format(*grid),
        "block {} {} {}".format(*block),
        f"shared {shared}",
        f"buffers {len(storages)}",
        *(f"buffer {raw.numel()}" for raw in storages.values()),
        f"args {len(args)}",
        *lines,
        "data",
    ]
    with tempfile.TemporaryDirectory(prefix="tutor-launch-") as tmp:
        launch, out = Path(tmp) / "launch", Path(tmp) / "out"
        with launch.open("wb") as file:
            file.write(("\n".join(header) + "\n").encode())
            for raw in storages.values():
                file.write(raw.numpy().tobytes())
        try:
            done = subprocess.run(
                [str(program), str(launch), str(out)],
                capture_output=True,
                timeout=LAUNCH_TIMEOUT_S,
                env=env,
            )
        except subprocess.TimeoutExpired as exc:
            stderr = (exc.stderr or b"").decode(errors="replace")
            return Ran(-1, _findings(out), stderr, timed_out=True)
        ran = Ran(
            done.returncode,
            _findings(out),
            done.stderr.decode(errors="replace"),
            stdout=done.stdout.decode(errors="replace")[-MAX_PRINTED:],
        )
        if done.returncode == 0:
            _copy_back(out, list(storages.values()))
        return ran


def pack(value: Any, fmt: str) -> bytes:
    """A scalar argument as the C type `fmt` (a struct format) holds it."""
    return struct.pack("<" + fmt, value)


def _storage_bytes(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's whole storage, as uint8, sharing its memory."""
    return torch.empty(0, dtype=torch.uint8).set_(tensor.untyped_storage())


def _findings(out: Path) -> list[Finding]:
    if not out.exists():
        return []
    head = out.read_bytes().split(b"\ndata\n", 1)[0].decode(errors="replace")
    found = []
    for line in head.splitlines():
        parts = line.split(" ", 3)
        if parts[0] == "finding" and len(parts) == 4 and parts[2].lstrip("-").isdigit():
            item = Finding(parts[1], int(parts[2]), parts[3])
            if item not in found:
                found.append(item)
    return found


def _copy_back(out: Path, storages: list[torch.Tensor]) -> None:
    data = out.read_bytes().split(b"\ndata\n", 1)[1]
    at = 0
    for raw in storages:
        n = raw.numel()
        raw.copy_(torch.frombuffer(bytearray(data[at : at + n]), dtype=torch.uint8))
        at += n
