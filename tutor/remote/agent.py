"""The host's side of a remote session: the tutor's runs, under the host's own supervisor.

    python -m tutor.remote.agent KEY_FD [--cpu] [--warm]    (tutor.remote.bootstrap becomes it)

It runs in the course's folder on the host, with the tutor that was shipped there, and reads
the tutor's messages on its standard input (tutor.remote.protocol): `Files` are placed in the
course's folder from the host's store, each `Run` starts in a thread of its own through
tutor.run.supervisor.supervise, exactly as a local run starts (a keeper in its own session, the
run mark, the time and memory limits, sealed events checked against the run's key, cold or
forked from a warm process on this host: its own, or the one the app's session keeps up there,
as `tutor check` borrows the app's here), and its output, its events and how it ended go back
as `Output`, `Event` and `Done`, sealed with the session's key. `Cancel` ends a run as the
app's cancel ends a local one.

Without a terminal sshd sends no hangup when the connection goes, so this process watches its
input: when it closes (the tutor ended, however: Ctrl-C, the app closed, SIGKILL, its ssh killed
or the connection dropped), or when no line came for LOST_AFTER_S (the tutor pings every few
seconds: a connection that dropped without closing), it cancels every run, which the
supervisor ends with everything the run started, closes the warm process, kills every process
still carrying this session's mark (SESSION, in the environment of everything started here),
and ends its own process group. Each run's keeper and guard end the run by themselves too if
this process dies first (tutor.run.keeper, tutor.run.child_guard).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil

from tutor.course.paths import CoursePaths
from tutor.remote.bootstrap import Channel, Lines
from tutor.remote.protocol import (
    Cancel,
    Done,
    Event,
    Files,
    Output,
    Ping,
    Run,
    Serving,
    decode,
    pack,
    unpack,
)
from tutor.remote.store import BadBundle, Store
from tutor.run.seal import read_key
from tutor.run.supervisor import COULD_NOT_START, Ended, supervise
from tutor.run.warm import WarmPool

SESSION = "TUTOR_REMOTE_SESSION"  # marks every process this agent starts
LOST_AFTER_S = 30.0  # no line from the tutor for this long: the connection is gone
RUN_END_WAIT_S = 15.0  # at the end, the longest wait for a cancelled run's supervisor


class Agent:
    def __init__(self, key: bytes, *, cpu: bool, warm: bool) -> None:
        self.channel = Channel(key)
        self.send_lock = threading.Lock()
        self.root = Path.cwd()
        self.store = Store(self.root.parents[1] / "store")  # VERSION/courses/NAME: VERSION/store
        self.runs: dict[str, threading.Event] = {}
        self.threads: list[threading.Thread] = []
        self.heard = time.monotonic()
        self.ending = threading.Lock()
        self.session = uuid.uuid4().hex
        os.environ[SESSION] = self.session
        # Its own warm process (the app, dev check), else the one another session keeps up for
        # this course (the app's, while it is open).
        course = CoursePaths(self.root)
        self.pool = (
            WarmPool.for_course(course, cpu=cpu or None)
            if warm
            else WarmPool.find(course.state_dir, cpu=cpu)
        )

    def send(self, message) -> None:
        try:
            with self.send_lock:
                self.channel.send(message)
        except OSError:  # the connection is gone
            self.end()

    def serve(self) -> None:
        threading.Thread(target=self._watch, name="tutor-agent-watch", daemon=True).start()
        self.send(Serving(os.getpid(), self.pool.backend if self.pool is not None else ""))
        lines = Lines(0)
        try:
            while True:
                line = lines.line()
                self.heard = time.monotonic()
                self.handle(decode(line))
        finally:  # Lines raises SystemExit when the input closes
            self.end()

    def handle(self, message) -> None:
        if isinstance(message, Files):
            try:
                for sha, data in message.blobs.items():
                    self.store.add(sha, unpack(data))
                self.store.place(self.root, message.entries)
            except (BadBundle, ValueError, OSError):
                pass  # the run that needs it says what it could not find
        elif isinstance(message, Run):
            cancel = self.runs.setdefault(message.id, threading.Event())
            thread = threading.Thread(target=self._run, args=(message, cancel), daemon=True)
            self.threads.append(thread)
            thread.start()
        elif isinstance(message, Cancel):
            self.runs.setdefault(message.id, threading.Event()).set()
        elif isinstance(message, Ping):
            pass  # heard: that is all a ping says

    def _run(self, run: Run, cancel: threading.Event) -> None:
        env = dict(os.environ)
        env.update(run.env)
        for name in run.unset:
            env.pop(name, None)
        for path in map(Path, run.returns):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
        try:
            ended = supervise(
                run.cmd,
                cwd=Path(run.cwd),
                env=env,
                timeout=run.timeout,
                cancel=cancel,
                on_output=lambda chunk: self.send(Output(run.id, pack(chunk))),
                on_events=(lambda line: self.send(Event(run.id, line.decode("utf-8", "replace"))))
                if run.events
                else None,
                memory_limit=run.memory_limit,
                startup_timeout=run.startup_timeout,
                warm=self.pool if run.warm else None,
            )
        except Exception as exc:  # noqa: BLE001 - the tutor hears why, the agent goes on
            ended = Ended(COULD_NOT_START, 127, f"{type(exc).__name__}: {exc}")
        files = {}
        for path in map(Path, run.returns):
            try:
                files[str(path)] = pack(path.read_bytes())
                path.unlink()
                path.parent.rmdir()  # the run's own folder (tutor.remote.bundle.RETURNS)
            except OSError:
                continue
        self.runs.pop(run.id, None)
        self.send(
            Done(
                run.id,
                ended.how,
                ended.returncode,
                ended.error,
                ended.peak_rss,
                ended.timed,
                ended.warm,
                files,
            )
        )

    def _watch(self) -> None:
        while time.monotonic() - self.heard < LOST_AFTER_S:
            time.sleep(1.0)
        self.end()

    def end(self) -> None:
        """The tutor is gone: every run ends, and everything this session started; never
        returns."""
        if not self.ending.acquire(blocking=False):
            time.sleep(RUN_END_WAIT_S + 5)  # another thread is ending it all
            os._exit(0)
        for cancel in list(self.runs.values()):
            cancel.set()
        deadline = time.monotonic() + RUN_END_WAIT_S
        for thread in self.threads:
            if thread is not threading.current_thread():
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.pool is not None:
            self.pool.close()  # a borrowed one is its owner's: close leaves it be
        sweep(self.session)
        try:
            os.killpg(os.getpgrp(), signal.SIGKILL)
        finally:
            os._exit(0)


def sweep(session: str) -> None:
    """Kill every process but this one that carries the session's mark."""
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        try:
            if process.environ().get(SESSION) == session:
                process.kill()
        except psutil.Error:
            continue


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tutor.remote.agent")
    parser.add_argument("key_fd", type=int)
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--warm", action="store_true")
    args = parser.parse_args(argv)
    key = read_key(args.key_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only its input ends it
    Agent(key, cpu=args.cpu, warm=args.warm).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
