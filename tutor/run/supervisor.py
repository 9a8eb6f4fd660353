"""The one way the tutor runs a child process: its own group, time and memory limits, cancel.

Both the test runner and the bench start their child through `supervise`:

    ended = supervise([python, "-m", "pytest", f"--tutor-events={EVENTS_PATH}",
                       f"--tutor-events-key={EVENTS_KEY}", ...],
                      cwd=root, env=env, timeout=120, cancel=event,
                      on_output=collect, on_events=fold)

- the command runs under a keeper (tutor.run.keeper): the tutor starts the keeper, the keeper starts
  the command as its only child, so code that signals its parent (`os.kill(os.getppid(), ...)`)
  reaches the keeper and never the tutor; a keeper that ends before it reported the run's end
  ends the run as PARENT_KILLED, one found stopped as PARENT_STOPPED;
- the keeper starts in a new session (its own process group, shared with the run), with no
  standard input, and with `TUTOR_RUN_ID` in its environment: every process the run starts
  inherits the mark, so even one that leaves the group (`start_new_session=True`) is found and
  ended with the run; `TUTOR_CLIENT` names the tutor's process, which the run's guard watches;
- its output (stdout and stderr together) and, when `on_events` is given, a pipe of its own
  (named in the command by the placeholder EVENTS_PATH) are read as they come and handed to the
  callbacks, in the calling thread; each event line must carry the seal of a key made for this
  run (tutor.run.seal; the command names the pipe holding it with EVENTS_KEY), and
  `on_events` gets the JSON of each sealed line, one call per line: others are dropped;
- the time limit counts from the first event when `on_events` is given (so importing torch
  and triton, slow on a busy machine, is not charged to the learner's kernel; start-up has its
  own, longer limit), else from the start;
- past the time limit, past the memory limit (the memory of every process of the run, added
  up), when `cancel` is set, or when the caller is interrupted (Ctrl-C), the run is ended;
  once the child has ended, whatever it left behind is ended too;
- the result says how it ended and with which return code (`describe_exit` puts that in words).

If the tutor itself dies (SIGKILL), the keeper sees its end of the channel close and ends the
run, and the child's own guard (tutor.run.child_guard) sees the tutor gone and ends it from inside.

With `warm` (a tutor.run.warm.WarmPool), a `python -m pytest` or `python -m tutor.bench.child` run
is forked from the warm process instead, which has torch and triton imported already; everything
above holds for it the same (its keeper starts its own session, carries the mark, and is watched
by its pid). When the warm process cannot take the run, it starts cold.
"""

from __future__ import annotations

import math
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from tutor.run.keeper import RUN_ID, Kept
from tutor.run.seal import SealedLines, key_pipe, new_key

EXITED, TIMED_OUT, CANCELLED, COULD_NOT_START = "exited", "timeout", "cancelled", "not-started"
OUT_OF_MEMORY = "out-of-memory"
# The run's keeper ended before it reported the run's end, or stopped: the run's code did it
# (a warm run's keeper can also go with the warm process's whole tree, tutor.run.runner re-runs it).
PARENT_KILLED, PARENT_STOPPED = "parent-killed", "parent-stopped"
# After the child exits, its pipes may stay open in a grandchild: wait this long, then stop.
PIPE_GRACE_S = 0.5
POLL_S = 0.05  # also how often the run's memory is read: a fast allocation overshoots little
STOPPED_GRACE_S = 1.0  # a keeper stopped this long is stopped for good (nothing resumes it)
END_WAIT_S = 10.0  # after SIGKILL, the longest wait for the run's keeper to be gone
STARTUP_TIMEOUT_S = 180.0  # python, torch and triton imports on a busy 2-core machine
EVENTS_PATH = "{tutor-events-path}"  # replaced in the command by the events pipe's /dev/fd path
EVENTS_KEY = "{tutor-events-key}"  # replaced by the fd of the pipe that holds the events key
CLIENT = "TUTOR_CLIENT"  # the pid of the tutor process that supervises the run
MEMORY_FRACTION = 0.5  # the default memory limit: half the machine's memory
MEMORY_LIMIT_VARIABLE = "TUTOR_MEMORY_LIMIT_MB"
# A cold run of a drill's solution peaked at 324-332 MB on the CPU (t1, t3, m3; 2026-12-01),
# before any tensor of the learner's: a smaller limit would end every run.
SMALLEST_MEMORY_LIMIT_MB = 512

Chunk = Callable[[bytes], None]


class MemoryLimitError(ValueError):
    """$TUTOR_MEMORY_LIMIT_MB says something that is not a usable limit; the message says why."""


def default_memory_limit() -> int:
    """Bytes a run may hold resident: $TUTOR_MEMORY_LIMIT_MB, else half the machine's memory."""
    explicit = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if not explicit:
        return int(psutil.virtual_memory().total * MEMORY_FRACTION)
    try:
        megabytes = float(explicit)
    except ValueError:
        megabytes = math.nan
    if not math.isfinite(megabytes):
        raise MemoryLimitError(
            f"{MEMORY_LIMIT_VARIABLE}={explicit!r} is not a number of megabytes "
            "(e.g. 8192, or unset it for half the machine's memory)"
        )
    if megabytes < SMALLEST_MEMORY_LIMIT_MB:
        raise MemoryLimitError(
            f"{MEMORY_LIMIT_VARIABLE}={explicit!r} is below {SMALLEST_MEMORY_LIMIT_MB} MB: "
            "every run would end as out of memory (torch and triton alone hold about 330 MB)"
        )
    return int(megabytes * 2**20)


@dataclass(frozen=True)
class Ended:
    how: str  # EXITED, TIMED_OUT, CANCELLED, OUT_OF_MEMORY, or COULD_NOT_START
    returncode: int
    error: str = ""  # why it could not start
    peak_rss: int = 0  # the most memory the run's processes held at once, in bytes
    timed: str = "run"  # what the time limit that stopped it was for: "run" or "start-up"
    warm: bool = False  # forked from the warm process (tutor.run.warm) rather than started cold

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
    memory_limit: int | None = None,
    startup_timeout: float = STARTUP_TIMEOUT_S,
    warm=None,
) -> Ended:
    """Run `cmd` to its end (or its limit) and return how it ended; see the module docstring."""
    run_id = uuid.uuid4().hex
    env = dict(env, **{RUN_ID: run_id, CLIENT: str(os.getpid())})
    events = _Events() if on_events is not None else None
    child = None
    try:
        if warm is not None:
            child = _start_warm(warm, cmd, cwd, env, events)
        if child is None:
            child = _start_cold(cmd, cwd, env, events)
    finally:
        if events is not None:
            events.handed_over()  # the child holds its own copies (or none: it did not start)
    if isinstance(child, str):
        if events is not None:
            events.close()
        return Ended(COULD_NOT_START, 127, child)
    assert child.stdout is not None
    watch = _Watch(
        child,
        timeout,
        startup_timeout if on_events else None,
        memory_limit,
        cancel,
    )
    streams: dict[int, Chunk | None] = {child.stdout.fileno(): on_output}
    if events is not None:
        assert on_events is not None
        streams[events.read] = events.reader(on_events, watch.first_event)
    try:
        how = _pump(child, streams, watch)
    finally:  # also on KeyboardInterrupt: nothing of the run may outlive this call
        end_run(child.pid, run_id)
        _wait_gone(child)
        if events is not None:
            events.close()
        child.stdout.close()
    if how == EXITED and child.lost:
        how = PARENT_KILLED
    return Ended(
        how,
        child.returncode if child.returncode is not None else -signal.SIGKILL,
        peak_rss=watch.peak_rss,
        timed=watch.timed,
        warm=child.process is None,
    )


class _Events:
    """A run's events pipe and the pipe that hands it this run's key (tutor.run.seal)."""

    def __init__(self) -> None:
        self.key = new_key()
        self.read, self.write = os.pipe()
        self.key_read: int | None = key_pipe(self.key)

    def command(self, cmd: list[str], events_fd: int, key_fd: int) -> list[str]:
        """`cmd` with the placeholders replaced by where the child finds the two pipes."""
        return [
            arg.replace(EVENTS_PATH, f"/dev/fd/{events_fd}").replace(EVENTS_KEY, str(key_fd))
            for arg in cmd
        ]

    def reader(self, on_line: Chunk, first: Callable[[], None]) -> Chunk:
        """What reads the events pipe: sealed lines go to `on_line`; the first one starts the
        run's clock (`first`)."""

        def on_sealed(line: bytes) -> None:
            first()
            on_line(line)

        return SealedLines(self.key, on_sealed).feed

    def handed_over(self) -> None:
        for fd in (self.write, self.key_read):
            if fd is not None:
                os.close(fd)
        self.write = self.key_read = None

    def close(self) -> None:
        os.close(self.read)


def _start_cold(cmd: list[str], cwd: Path, env: dict[str, str], events: _Events | None):
    """The run started under a keeper of its own (tutor.run.keeper), or why it could not start."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    passed = [theirs.fileno()]
    if events is not None:
        assert events.write is not None and events.key_read is not None
        passed += [events.write, events.key_read]
        cmd = events.command(cmd, events.write, events.key_read)
    try:
        keeper = subprocess.Popen(
            [sys.executable, "-m", "tutor.run.keeper", str(theirs.fileno()), "--", *cmd],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=passed,
            start_new_session=True,
        )
    except OSError as exc:
        ours.close()
        return f"could not start {cmd[0]}: {exc.strerror}"
    finally:
        theirs.close()
    return Kept(ours, keeper.pid, keeper.stdout, keeper)


def _start_warm(warm, cmd: list[str], cwd: Path, env: dict[str, str], events: _Events | None):
    """The run forked from the warm process (tutor.run.warm), or None to start it cold.

    `cmd` is `python -m MODULE ARGS`, MODULE one the warm process runs (tutor.run.zygote.MODULES):
    it runs MODULE with ARGS itself.
    """
    from tutor.run.protocol import EVENTS_FD, KEY_FD
    from tutor.run.zygote import MODULES

    if len(cmd) < 3 or cmd[1] != "-m" or cmd[2] not in MODULES:
        return None
    output_read, output_write = os.pipe()
    args = cmd[3:]
    fds = [output_write, output_write, output_write]  # no events: the slots still need an fd
    if events is not None:
        assert events.write is not None and events.key_read is not None
        args = events.command(args, EVENTS_FD, KEY_FD)
        fds = [output_write, events.write, events.key_read]
    try:
        child = warm.start(cmd[2], args, cwd, env, fds)
    finally:
        os.close(output_write)
    if child is None:
        os.close(output_read)
        return None
    child.stdout = os.fdopen(output_read, "rb", buffering=0)
    return child


def _wait_gone(child: Kept) -> None:
    """Wait for the run's keeper, killed or done, to be gone; never for ever."""
    try:
        child.wait(timeout=END_WAIT_S)
    except subprocess.TimeoutExpired:
        child.lost = True


class _Watch:
    """The limits of one run, checked between reads."""

    def __init__(
        self,
        child: Kept,
        timeout: float,
        startup_timeout: float | None,
        memory_limit: int | None,
        cancel: threading.Event | None,
    ) -> None:
        self.child, self.cancel = child, cancel
        self.timeout, self.memory_limit = timeout, memory_limit
        self.started = time.monotonic()
        # Without an events pipe the limit runs from the start; with one, from its first event.
        self.deadline = self.started + (startup_timeout if startup_timeout else timeout)
        self.waiting_for_start = startup_timeout is not None
        self.timed = "start-up" if self.waiting_for_start else "run"
        self.peak_rss = 0
        self.stopped_since: float | None = None
        try:
            self.keeper: psutil.Process | None = psutil.Process(child.pid)
        except psutil.Error:
            self.keeper = None

    def first_event(self) -> None:
        if self.waiting_for_start:
            self.waiting_for_start = False
            self.timed = "run"
            self.deadline = time.monotonic() + self.timeout

    def verdict(self) -> str | None:
        """Why the run must end now, or None."""
        if self.cancel is not None and self.cancel.is_set():
            return CANCELLED
        if time.monotonic() > self.deadline:
            return TIMED_OUT
        if self._keeper_stopped():
            return PARENT_STOPPED
        if self.memory_limit is not None:
            rss = run_memory(self.child.pid, itself=False)
            self.peak_rss = max(self.peak_rss, rss)
            if rss > self.memory_limit:
                return OUT_OF_MEMORY
        return None

    def _keeper_stopped(self) -> bool:
        """Whether the keeper has been stopped (SIGSTOP) for STOPPED_GRACE_S: it cannot report
        the run's end, and nothing the tutor does resumes it."""
        try:
            stopped = self.keeper is not None and self.keeper.status() == psutil.STATUS_STOPPED
        except psutil.Error:
            stopped = False
        if not stopped:
            self.stopped_since = None
            return False
        now = time.monotonic()
        self.stopped_since = self.stopped_since or now
        return now - self.stopped_since > STOPPED_GRACE_S


def _pump(child: Kept, streams: dict[int, Chunk | None], watch: _Watch) -> str:
    selector = selectors.DefaultSelector()
    for fd, callback in streams.items():
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ, callback)
    open_streams = len(streams)
    exited_at: float | None = None
    try:
        while True:
            stop = watch.verdict()
            if stop is not None:
                return stop
            now = time.monotonic()
            if exited_at is None and child.poll() is not None:
                exited_at = now
            if exited_at is not None and (not open_streams or now - exited_at > PIPE_GRACE_S):
                return EXITED
            for key, _ in selector.select(timeout=POLL_S):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    open_streams -= 1
                    continue
                if key.data is not None:
                    key.data(chunk)
    finally:
        selector.close()


def descendants(pid: int) -> list[psutil.Process]:
    """The processes below `pid`, children first.

    Linux lists each thread's children in /proc/PID/task/TID/children: reading those is a few
    files per process of the run, where psutil's `children()` reads the status of every process
    on the machine (1-3 ms each time, and the supervisor asks every POLL_S). Where the kernel
    has no such file, psutil's way.
    """
    if not _CHILDREN_FILES:
        try:
            return psutil.Process(pid).children(recursive=True)
        except psutil.Error:
            return []
    found: list[psutil.Process] = []
    below = _children_of(pid)
    while below:
        child = below.pop(0)
        try:
            found.append(psutil.Process(child))
        except psutil.Error:
            continue
        below += _children_of(child)
    return found


def _children_of(pid: int) -> list[int]:
    """The pids of `pid`'s children (any of its threads may have started one)."""
    kids: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as listed:
                kids += map(int, listed.read().split())
        except (OSError, ValueError):
            continue
    return kids


_CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def run_processes(leader: int, run_id: str) -> list[psutil.Process]:
    """Every live process of a run: the leader's group, its descendants, and any process that
    carries the run's mark in its environment (one that left the group, or was orphaned)."""
    found: dict[int, psutil.Process] = {}
    try:
        found[leader] = psutil.Process(leader)
    except psutil.Error:
        pass
    for child in descendants(leader):
        found[child.pid] = child
    for process in psutil.process_iter():
        if process.pid in found or process.pid == os.getpid():
            continue
        try:
            if os.getpgid(process.pid) == leader or process.environ().get(RUN_ID) == run_id:
                found[process.pid] = process
        except (psutil.Error, OSError):
            continue  # gone, or not ours to read
    return list(found.values())


def run_memory(leader: int, *, itself: bool = True) -> int:
    """Bytes of memory `leader` and its descendants hold (cheap enough to read often); with
    `itself=False`, its descendants only (a run's keeper is the tutor's, not the run's).

    One process: its resident set. Several (the learner's code forked): their proportional set
    sizes, because forked processes share pages copy-on-write and summing resident sets counts
    those pages once per process (five nested forks of a torch process read as 13 GB that way).
    """
    try:
        processes = ([psutil.Process(leader)] if itself else []) + descendants(leader)
    except psutil.Error:
        return 0
    measure = _resident if len(processes) == 1 else _proportional
    total = 0
    for process in processes:
        try:
            total += measure(process)
        except psutil.Error:
            continue
    return total


def _resident(process: psutil.Process) -> int:
    return process.memory_info().rss


def _proportional(process: psutil.Process) -> int:
    """The process's share of the pages it uses (PSS); its resident set where PSS is unknown."""
    try:
        return process.memory_full_info().pss
    except (psutil.AccessDenied, AttributeError):  # AttributeError: no pss on this platform
        return _resident(process)


def end_run(leader: int, run_id: str) -> None:
    """Kill every process of the run (see `run_processes`), the group first."""
    kill_group(leader)
    for process in run_processes(leader, run_id):
        try:
            process.kill()
        except psutil.Error:
            pass


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
