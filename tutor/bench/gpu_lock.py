"""One timed stretch on the card at a time, across processes: the lock the bench's timings take.

A bench starts torch.compile's processes while it times its own kernels, and
scripts/gpu_report.py runs several benches at once, so that their untimed work (starting
Python, importing torch, compiling, making inputs) overlaps; only the stretches that time the
GPU must not. `tutor.bench.bench_drill` names the course's lock file (LOCK_FILE in its state
folder) in $TUTOR_GPU_LOCK for every process of a bench, and every timed stretch
(tutor.bench.timing's do_bench median and CUDA-graph replay, tutor.bench.facts' profiled call)
holds an exclusive `flock` on it. Without the variable (a bench child started by hand),
`exclusive()` does nothing.

The lock is re-entrant within a process (an anchor that times two ways holds it once), and
the kernel lets it go when its process dies, so a killed bench never leaves the card locked.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

LOCK_ENV = "TUTOR_GPU_LOCK"
LOCK_FILE = "gpu-timing.lock"  # in the course's state folder

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
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
