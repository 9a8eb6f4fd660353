"""The inside half of a run's guarantees: loaded into every child the tutor starts.

    python -m pytest ... -p tutor.run.child_guard --tutor-deadline=300

The tutor (tutor.run.supervisor) ends a run from the outside. This ends it from the inside when
the outside cannot: if the run's keeper (its parent, tutor.run.keeper) or the tutor that supervises
it ($TUTOR_CLIENT) dies (SIGKILL, a closed terminal), or the child outlives its deadline, a
watchdog thread kills every process of the run, and the run itself last. (Watching the tutor
too matters when the keeper is stopped: a stopped keeper cannot see its tutor go.) It also
makes the child a subreaper, so processes the learner's code starts and abandons stay below it
and are ended when the run ends, however it ends.

As a pytest plugin it also ends the run as soon as its session is over: threads the learner's
code left running (not daemon threads) would otherwise hold the process at Python's exit until
the time limit, and a run whose every test passed would be reported as a hang.

Used as a pytest plugin by the runner, and through `install` by the bench process.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

import psutil
import pytest

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
WATCH_S = 0.2


def install(deadline_s: float | None, parent: int | None = None) -> None:
    """Become a subreaper and start the watchdog; `deadline_s` counts from now."""
    parent = os.getppid() if parent is None else parent
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the outside half still ends the run
        pass
    deadline = time.monotonic() + deadline_s if deadline_s else None
    me = os.getpid()
    client = _client()

    def watch() -> None:
        while True:
            time.sleep(WATCH_S)
            if os.getpid() != me:
                return  # a fork of this process: its own run's business, not ours
            orphaned = os.getppid() != parent or (client is not None and not client.is_running())
            late = deadline is not None and time.monotonic() > deadline
            if orphaned or late:
                end_everything()

    threading.Thread(target=watch, name="tutor-child-guard", daemon=True).start()


def _client() -> psutil.Process | None:
    """The tutor process that supervises this run (tutor.run.supervisor.CLIENT), if it is known."""
    try:
        return psutil.Process(int(os.environ.get("TUTOR_CLIENT", "")))
    except (ValueError, psutil.Error):
        return None


def end_descendants() -> None:
    """Kill every process below this one (with the subreaper set, orphans are below it too)."""
    try:
        below = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    for process in below:
        try:
            process.kill()
        except psutil.Error:
            pass


def end_everything() -> None:
    """The run is over: its descendants, then its process group, this process included."""
    end_descendants()
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(137)


# ---- as a pytest plugin ----------------------------------------------------------------------


def pytest_addoption(parser) -> None:
    parser.getgroup("tutor").addoption(
        "--tutor-deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="end this run, and every process it started, after SECONDS",
    )


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):
        install(config.getoption("--tutor-deadline"))


_SESSION = pytest.StashKey[pytest.Session]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_SESSION] = session


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config) -> None:
    # Processes the learner's code started and left running end with the run, and so does the
    # run itself, now, with pytest's exit status (every other plugin has unconfigured: trylast).
    end_descendants()
    session = config.stash.get(_SESSION, None)
    if session is None or hasattr(config, "workerinput"):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(session.exitstatus))
