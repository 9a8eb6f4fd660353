"""One timed stretch on the card at a time, across processes: the lock the bench's timings take.

scripts/gpu_report.py runs several bench processes at once so that their untimed work (starting
Python, importing torch, compiling kernels, making inputs) overlaps; only the stretches that
time the GPU must not. It names a lock file in $TUTOR_GPU_LOCK, and every timed stretch
(tutor.bench.timing's do_bench median and CUDA-graph replay, tutor.bench.facts' profiled
call) holds an exclusive `flock` on it. Without the variable, as in `tutor bench`, where one
process times alone, `exclusive()` does nothing.

The lock is re-entrant within a process (an anchor that times two ways holds it once), and
the kernel lets it go when its process dies, so a killed bench never leaves the card locked.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

LOCK_ENV = "TUTOR_GPU_LOCK"

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

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
