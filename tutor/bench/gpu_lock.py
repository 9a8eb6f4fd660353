"""One timed stretch on the card at a time, across processes: the lock the bench's timings take.

A bench starts torch.compile's processes while it times its own kernels, and
`tutor dev report` runs several benches at once, so that their untimed work (starting
Python, importing torch, compiling, making inputs) overlaps; only the stretches that time the
GPU must not. `tutor.bench.bench_drill` names the course's lock file (LOCK_FILE in its state
folder) in $TUTOR_GPU_LOCK for every process of a bench, and every timed stretch
(tutor.bench.timing's do_bench median and CUDA-graph replay, tutor.bench.facts' profiled call)
holds an exclusive `flock` on it. Without the variable (a bench child started by hand),
`exclusive()` does nothing.

The lock is re-entrant within a process (an anchor that times two ways holds it once), and
the kernel lets it go when its process dies, so a killed bench never leaves the card locked.

With $TUTOR_GPU_LOCK_HOLDS naming a file as well, every hold appends a line to it (when it was
taken, when it was let go, how long it was waited for): `tutor dev report` sums them, to
tell whether its benches wait on the card or on their own compiles. Nothing else sets it, so a
learner's benches write nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tutor.course.files import read_regular

LOCK_ENV = "TUTOR_GPU_LOCK"
LOCK_FILE = "gpu-timing.lock"  # in the course's state folder
HOLDS_ENV = "TUTOR_GPU_LOCK_HOLDS"

_held = threading.local()


@contextlib.contextmanager
def exclusive() -> Iterator[None]:
    """Hold the card's timing lock (named by $TUTOR_GPU_LOCK) for the `with` block, if any."""
    path = os.environ.get(LOCK_ENV)
    depth = getattr(_held, "depth", 0)
    if not path or depth:
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth = depth
        return
    import fcntl

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        asked = time.time()
        fcntl.flock(fd, fcntl.LOCK_EX)
        taken = time.time()
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
            _note_hold(Hold(taken, time.time(), taken - asked))
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Hold:
    """One timed stretch: wall-clock seconds (time.time(), comparable across processes)."""

    taken: float
    released: float
    waited: float


def _note_hold(hold: Hold) -> None:
    """Append `hold` to $TUTOR_GPU_LOCK_HOLDS, if set. One short O_APPEND write a line, so the
    processes' lines never interleave; a failure loses the line, never the timing."""
    path = os.environ.get(HOLDS_ENV)
    if not path:
        return
    line = f"{hold.taken:.6f} {hold.released:.6f} {hold.waited:.6f}\n".encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass


def read_holds(path: Path) -> list[Hold]:
    """The holds noted in `path` (none if it is missing); a torn or foreign line is skipped."""
    try:
        text = read_regular(path).decode("utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        try:
            found.append(Hold(*(float(part) for part in line.split())))
        except (TypeError, ValueError):
            continue
    return found
