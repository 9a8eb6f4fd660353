"""The card's timing lock (tutor.bench.gpu_lock): scripts/gpu_report.py runs bench processes side
by side and relies on no two of them timing at once, and on a killed one freeing the card."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tutor.bench.gpu_lock import LOCK_ENV, exclusive

ROOT = Path(__file__).resolve().parents[1]

HOLDER = textwrap.dedent(
    """
    import sys
    from tutor.bench.gpu_lock import exclusive

    with exclusive():
        with exclusive():  # a timing inside another (an anchor timed two ways) holds it once
            print("held", flush=True)
            sys.stdin.readline()
    print("released", flush=True)
    sys.stdin.readline()
    """
)


def _line(proc: subprocess.Popen, wait_s: float = 60.0) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], wait_s)
    assert ready, "the holder printed nothing: it is stuck"
    return proc.stdout.readline().strip()


def _try_lock(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@pytest.fixture
def holder(tmp_path):
    lock = tmp_path / "gpu.lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, **{LOCK_ENV: str(lock)}),
    )
    yield proc, lock
    proc.kill()
    proc.wait()


def test_a_process_timing_keeps_every_other_off_the_card_until_it_is_done(holder):
    proc, lock = holder
    assert _line(proc) == "held"
    assert not _try_lock(lock)
    proc.stdin.write("\n")
    proc.stdin.flush()
    assert _line(proc) == "released"
    assert _try_lock(lock)


def test_a_killed_process_leaves_the_card_free(holder):
    proc, lock = holder
    assert _line(proc) == "held"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _try_lock(lock)


def test_without_a_lock_named_timing_waits_for_nothing(tmp_path, monkeypatch):
    """`tutor bench` times alone: it names no lock, and a lock held elsewhere does not stop it."""
    lock = tmp_path / "gpu.lock"
    monkeypatch.delenv(LOCK_ENV, raising=False)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with exclusive():
            pass
    finally:
        os.close(fd)
    assert [p.name for p in tmp_path.iterdir()] == ["gpu.lock"]
