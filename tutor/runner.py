"""Run a drill's tests in a child pytest process and collect a RunResult.

The learner's code never runs in the tutor's process: the child is started in its own process
group, streams one JSON event per test through a pipe (`tutor.pytest_events`), and is killed
with its whole group at the time limit or when the caller cancels. Each event is passed to
`on_event` as it arrives, so a UI can show progress live.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from tutor import diagnoses as dx
from tutor import results as r
from tutor.catalogue import Catalogue

DEFAULT_TIMEOUT_S = 120.0  # the CPU interpreter plus a first JIT compile fit well inside this
OUTPUT_TAIL = 6000

EventCallback = Callable[[dict[str, Any]], None]


class Runner:
    """Runs drills of one catalogue; one `run` call per run, safe to use from a worker thread."""

    def __init__(
        self,
        catalogue: Catalogue,
        *,
        force_cpu: bool = False,
        timeout: float = DEFAULT_TIMEOUT_S,
        python: str = sys.executable,
    ) -> None:
        self.catalogue = catalogue
        self.force_cpu = force_cpu
        self.timeout = timeout
        self.python = python

    def command(self, drill_id: str, impl: str, events_path: str) -> list[str]:
        drill = self.catalogue.drill(drill_id)
        paths = self.catalogue.paths
        cmd = [
            self.python,
            "-m",
            "pytest",
            str(paths.test_file(drill.file)),
            "-p",
            "tutor.pytest_events",
            f"--tutor-events={events_path}",
            f"--impl={impl}",
            "-q",
            "--no-header",
            "-rN",
            "-p",
            "no:cacheprovider",
            f"--rootdir={paths.root}",
        ]
        if self.force_cpu:
            cmd.append("--cpu")
        return cmd

    def run(
        self,
        drill_id: str,
        impl: str = "mine",
        *,
        on_event: EventCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> r.RunResult:
        drill = self.catalogue.drill(drill_id)
        paths = self.catalogue.paths
        impl_path = paths.resolve_impl(drill.file, impl)
        result = r.RunResult(drill=drill_id, impl=str(impl_path), status=r.SETUP_ERROR)
        if not paths.test_file(drill.file).is_file():
            result.message = f"{paths.test_file(drill.file)} does not exist"
            return result
        if not impl_path.is_file():
            result.message = f"{impl_path} does not exist"
            result.diagnoses = [dx.MISSING_FILE]
            return result
        started = time.monotonic()
        read_fd, write_fd = os.pipe()
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
        env.pop("TRITON_INTERPRET", None)  # the child decides, from --cpu and the hardware
        try:
            child = subprocess.Popen(
                self.command(drill_id, str(impl_path), f"/dev/fd/{write_fd}"),
                cwd=paths.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            os.close(write_fd)
            result.message = f"could not start {self.python}: {exc.strerror}"
            return result
        os.close(write_fd)
        collector = _Collector(result, on_event)
        ended = _pump(child, read_fd, collector, self.timeout, cancel)
        result.duration = round(time.monotonic() - started, 2)
        collector.finish(child.returncode, ended, self.timeout)
        return result


def _pump(
    child: subprocess.Popen,
    events_fd: int,
    collector: _Collector,
    timeout: float,
    cancel: threading.Event | None,
) -> str:
    """Read events and output until the child exits; returns 'exited', 'timeout' or 'cancelled'."""
    selector = selectors.DefaultSelector()
    assert child.stdout is not None
    os.set_blocking(events_fd, False)
    os.set_blocking(child.stdout.fileno(), False)
    selector.register(events_fd, selectors.EVENT_READ, "events")
    selector.register(child.stdout.fileno(), selectors.EVENT_READ, "output")
    deadline = time.monotonic() + timeout
    ended = "exited"
    open_streams = 2
    try:
        while open_streams:
            if cancel is not None and cancel.is_set():
                ended = "cancelled"
                break
            if time.monotonic() > deadline:
                ended = "timeout"
                break
            for key, _ in selector.select(timeout=0.1):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    open_streams -= 1
                elif key.data == "events":
                    collector.feed_events(chunk)
                else:
                    collector.feed_output(chunk)
    finally:
        if ended != "exited":
            kill_group(child)
        child.wait()
        selector.close()
        os.close(events_fd)
        child.stdout.close()
    return ended


def kill_group(child: subprocess.Popen) -> None:
    """Kill a child started with start_new_session=True, and everything it started."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def describe_exit(returncode: int) -> str:
    """`signal SIGSEGV` or `exit code 3`, for a child's return code."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class _Collector:
    """Turns the event stream into the RunResult, and forwards each event."""

    def __init__(self, result: r.RunResult, on_event: EventCallback | None) -> None:
        self.result = result
        self.on_event = on_event
        self.partial = b""
        self.output = bytearray()
        self.running: str | None = None
        self.collect_errors: list[str] = []
        self.session_ended = False

    def feed_output(self, chunk: bytes) -> None:
        self.output += chunk
        del self.output[: max(0, len(self.output) - 4 * OUTPUT_TAIL)]

    def feed_events(self, chunk: bytes) -> None:
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        for line in lines:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            self._handle(event)
            if self.on_event is not None:
                self.on_event(event)

    def _handle(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "session_start":
            self.result.backend = event.get("backend", "")
            self.result.device_name = event.get("device_name", "")
        elif kind == "test_start":
            self.running = event["id"]
        elif kind == "test":
            self.running = None
            fields = {k: event.get(k) for k in ("id", "outcome", "diagnosis", "line")}
            self.result.tests.append(
                r.TestResult(
                    **fields,
                    message=event.get("message") or "",
                    details=event.get("details") or "",
                    duration=event.get("duration") or 0.0,
                )
            )
        elif kind == "collect_error":
            self.collect_errors.append(event.get("message", ""))
        elif kind == "session_end":
            self.session_ended = True

    def finish(self, returncode: int, ended: str, timeout: float) -> None:
        result = self.result
        result.output = self.output.decode("utf-8", "replace")[-OUTPUT_TAIL:]
        found = [t.diagnosis for t in result.tests if t.outcome == "failed" and t.diagnosis]
        hung = self.running.split("::")[-1] if self.running else None
        if ended == "cancelled":
            result.status, result.message = r.CANCELLED, "replaced by a newer run"
        elif ended == "timeout":
            result.status = r.TIMEOUT
            result.message = (
                f"killed after {timeout:.0f} s"
                + (f" while running {hung}" if hung else "")
                + ": a kernel that never finishes, or a very slow one"
            )
            found.append(dx.KERNEL_HANG)
        elif returncode < 0 or (not self.session_ended and returncode != 0):
            result.status = r.CRASHED
            result.message = f"the test process died ({describe_exit(returncode)})" + (
                f" while running {hung}" if hung else ""
            )
            found.append(dx.PROCESS_CRASHED)
        elif self.collect_errors:
            result.status = r.COLLECTION_ERROR
            result.message = (
                "the drill's test file could not be collected:\n" + self.collect_errors[0]
            )
        elif returncode == 0 and result.tests:
            result.status = r.PASSED
        elif returncode in (1,) and result.tests:
            result.status = r.FAILED
        else:
            result.status = r.SETUP_ERROR
            result.message = f"pytest exited with code {returncode} and ran no test"
        result.diagnoses = dx.most_specific_first(found)
