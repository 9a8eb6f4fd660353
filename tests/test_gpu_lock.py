"""The card's timing lock (tutor.bench.gpu_lock): `tutor dev report` runs bench processes side
by side and relies on no two of them timing at once, and on a killed one freeing the card."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tutor.bench.gpu_lock import HOLDS_ENV, LOCK_ENV, exclusive, read_holds

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


def test_the_report_reads_how_long_each_stretch_held_the_card_and_waited(tmp_path, monkeypatch):
    """gpu_report.py names a holds file: every hold is one line, a nested timing none of its
    own, and a stretch that waited for another process says how long."""
    lock, holds = tmp_path / "gpu.lock", tmp_path / "holds"
    monkeypatch.setenv(LOCK_ENV, str(lock))
    monkeypatch.setenv(HOLDS_ENV, str(holds))
    with exclusive():
        with exclusive():
            time.sleep(0.05)
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as if another bench were timing
    let_go = threading.Timer(0.1, lambda: os.close(fd))
    let_go.start()
    with exclusive():
        pass
    let_go.join()
    first, second = read_holds(holds)
    assert first.released - first.taken >= 0.04  # slept 0.05 s (a margin for rounding)
    assert second.waited >= 0.05 and second.taken >= first.released  # held 0.1 s elsewhere


def test_a_learners_bench_notes_no_holds(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "gpu.lock"))
    monkeypatch.delenv(HOLDS_ENV, raising=False)
    with exclusive():
        pass
    assert [p.name for p in tmp_path.iterdir()] == ["gpu.lock"]


def test_a_torn_or_foreign_holds_line_is_skipped(tmp_path):
    holds = tmp_path / "holds"
    holds.write_text("1.0 2.0 0.5\n3.0 4\nnot a hold\n5.0 6.0 0.0\n")
    assert [hold.taken for hold in read_holds(holds)] == [1.0, 5.0]
    assert read_holds(tmp_path / "missing") == []
