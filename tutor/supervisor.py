"""The one way the tutor runs a child process: its own process group, a time limit, cancel.

Both the test runner and the bench start their child through `supervise`:

    ended = supervise([python, "-m", "pytest", f"--tutor-events={EVENTS_PATH}", ...],
                      cwd=root, env=env, timeout=120, cancel=event,
                      on_output=collect, on_events=fold)

- the child starts in a new session (its own process group), with no standard input;
- its output (stdout and stderr together) and, when `on_events` is given, a pipe of its own
  (named in the command by the placeholder EVENTS_PATH) are read as they come and handed to the
  callbacks, in the calling thread;
- at the time limit, or when `cancel` is set, the whole group is killed; once the child has
  ended, whatever it left behind in its group is killed too, so nothing of a run stays;
- the result says how it ended and with which return code (`describe_exit` puts that in words).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

EXITED, TIMED_OUT, CANCELLED, NOT_STARTED = "exited", "timeout", "cancelled", "not-started"
# After the child exits, its pipes may stay open in a grandchild: wait this long, then stop.
PIPE_GRACE_S = 0.5
EVENTS_PATH = "{tutor-events-path}"  # replaced in the command by the events pipe's /dev/fd path
POLL_S = 0.1

Chunk = Callable[[bytes], None]


@dataclass(frozen=True)
class Ended:
    how: str  # EXITED, TIMED_OUT, CANCELLED, or NOT_STARTED (the program could not start)
    returncode: int
    error: str = ""  # why it could not start

    @property
    def description(self) -> str:
        return describe_exit(self.returncode)


def supervise(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    cancel: threading.Event | None = None,
    on_output: Chunk | None = None,
    on_events: Chunk | None = None,
) -> Ended:
    """Run `cmd` to its end (or its limit) and return how it ended; see the module docstring."""
    events_read = events_write = None
    if on_events is not None:
        events_read, events_write = os.pipe()
        cmd = [arg.replace(EVENTS_PATH, f"/dev/fd/{events_write}") for arg in cmd]
    try:
        child = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=() if events_write is None else (events_write,),
            start_new_session=True,
        )
    except OSError as exc:
        if events_read is not None:
            os.close(events_read)
        return Ended(NOT_STARTED, 127, f"could not start {cmd[0]}: {exc.strerror}")
    finally:
        if events_write is not None:
            os.close(events_write)  # the child holds its own copy
    assert child.stdout is not None
    streams = {child.stdout.fileno(): on_output}
    if events_read is not None:
        streams[events_read] = on_events
    how = _pump(child, streams, time.monotonic() + timeout, cancel)
    kill_group(child.pid)  # a hang, or whatever the child left running in its group
    child.wait()
    if events_read is not None:
        os.close(events_read)
    child.stdout.close()
    return Ended(how, child.returncode)


def _pump(
    child: subprocess.Popen,
    streams: dict[int, Chunk | None],
    deadline: float,
    cancel: threading.Event | None,
) -> str:
    selector = selectors.DefaultSelector()
    for fd, callback in streams.items():
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ, callback)
    open_streams = len(streams)
    exited_at: float | None = None
    try:
        while True:
            if cancel is not None and cancel.is_set():
                return CANCELLED
            now = time.monotonic()
            if now > deadline:
                return TIMED_OUT
            if exited_at is None and child.poll() is not None:
                exited_at = now
            if exited_at is not None and (not open_streams or now - exited_at > PIPE_GRACE_S):
                return EXITED
            for key, _ in selector.select(timeout=POLL_S):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    open_streams -= 1
                elif key.data is not None:
                    key.data(chunk)
    finally:
        selector.close()


def kill_group(pid: int) -> None:
    """Kill the process group `pid` leads (a child started in its own session), if any is left."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def describe_exit(returncode: int) -> str:
    """`signal SIGSEGV` or `exit code 3`, for a child's return code."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"
