"""A host reached over ssh, where the runs start instead of here (tutor.run.host's questions).

    host = RemoteHost(Target("gpu-box"), paths, on_progress=print)
    host.connect()                        # RemoteError, in words, when it cannot
    runner = Runner(catalogue, host=host) # every run of it starts on gpu-box
    host.close()                          # the host ends whatever is left there

One ssh session (tutor.remote.ssh) carries everything, in tutor.remote.protocol's messages:
connecting sends the bootstrap in the ssh command, says the host's set-up steps as they come
(`on_progress`), ships the bundle (tutor.remote.bundle: only what the host's store lacks) and
waits for the agent; each `supervise` then sends what changed and the run, and hands the run's
output and events (their paths made this machine's again) to the callbacks in the calling
thread, as tutor.run.supervisor.supervise does, until the host says how the run ended. Every
line the host writes must carry the session key's seal; any other is dropped.

A cancel (or Ctrl-C, or SIGTERM: anything that interrupts `supervise`) is sent to the host; a
host that has not ended the run within CANCEL_WAIT_S is let go, which ends everything there
(its agent watches its input). A connection that drops ends the run in progress as
COULD_NOT_START with the reason; the next run connects again.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tutor import __version__
from tutor.course.paths import CoursePaths
from tutor.lang.i18n import _
from tutor.remote import messages
from tutor.remote.bundle import Bundle, course_name
from tutor.remote.protocol import (
    Cancel,
    Done,
    Event,
    Hello,
    Need,
    Output,
    Ping,
    Progress,
    Refusal,
    Run,
    Serving,
    Synced,
    Welcome,
    decode,
    unpack,
)
from tutor.remote.ship import remote_command
from tutor.remote.ssh import ssh_command
from tutor.remote.target import Target
from tutor.run.seal import SealedLines, new_key
from tutor.run.supervisor import (
    CANCELLED,
    COULD_NOT_START,
    MEMORY_FRACTION,
    MEMORY_LIMIT_VARIABLE,
    STARTUP_TIMEOUT_S,
    Ended,
    default_memory_limit,
)

# What a new environment on the host installs: the tutor's own dependencies that a run
# imports (pyproject.toml's, without the app's Textual and watchfiles: tests/test_remote.py).
HOST_REQUIREMENTS = [
    "torch>=2.8",
    "triton>=3.4",
    "numpy",
    "pytest>=8",
    "pyyaml>=6",
    "psutil>=5.9",
]
TORCH_INDEX_VARIABLE = "TUTOR_TORCH_INDEX"  # where the host's pip finds torch, instead
PIP_VARIABLE = "TUTOR_REMOTE_PIP"  # more pip options for the host (--find-links DIR, ...)
CACHE_VARIABLE = "TUTOR_REMOTE_CACHE"  # the host's cache folder, instead of ~/.cache/...
CONNECT_TIMEOUT_S = 120.0  # from ssh's start to the agent's answer, set-up aside
PING_S = 5.0  # well inside tutor.remote.agent.LOST_AFTER_S
CANCEL_WAIT_S = 15.0  # a cancelled run's end, from the host; then the session is let go
HOST_GRACE_S = 60.0  # past the run's own limits, a host that says nothing is lost

Say = Callable[[str], None]


class RemoteError(Exception):
    """The host cannot be used; the message says why, in the learner's language."""


class _Lost:
    """Put on every waiting run's queue when the connection goes."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True)
class RemoteWarm:
    """The host's warm process, as the runner asks about one (tutor.run.warm.WarmPool.cpu)."""

    cpu: bool


class RemoteHost:
    def __init__(
        self,
        target: Target,
        paths: CoursePaths,
        *,
        cpu: bool = False,
        warm: bool = False,
        on_progress: Say | None = None,
    ) -> None:
        """`cpu`: the host's CPU interpreter on purpose (--cpu: no GPU needed there); `warm`:
        keep a warm process on the host (the app, `tutor dev check`)."""
        self.target, self.paths = target, paths
        self.cpu, self.keep_warm = cpu, warm
        self.on_progress = on_progress
        self.name = target.host
        self.welcome: Welcome | None = None
        self.serving: Serving | None = None
        self.bundle = Bundle(paths)  # the session's, once connected
        self._session: _Session | None = None
        self._lock = threading.Lock()
        self._sending = threading.Lock()
        self.connects = 0  # sessions opened so far

    # ---- tutor.run.host's questions ------------------------------------------------------------

    @property
    def warm(self) -> RemoteWarm | None:
        if self.serving is None or not self.serving.warm_backend:
            return None
        return RemoteWarm(self.serving.warm_backend == "cpu")

    def has_gpu(self) -> bool:
        return self.welcome is not None and self.welcome.has_gpu

    def runs_on_cpu(self, force_cpu: bool) -> bool:
        return force_cpu or self.cpu or not self.has_gpu()

    def gpu_names(self) -> tuple[str, ...] | None:
        return tuple(self.welcome.gpus) if self.welcome is not None else None

    def memory_limit(self) -> int:
        """The run's memory limit on the host: $TUTOR_MEMORY_LIMIT_MB as set here, else half
        the host's memory."""
        if os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip() or self.welcome is None:
            return default_memory_limit()
        return int(self.welcome.memory * MEMORY_FRACTION)

    def cannot_run(self) -> str:
        return ""  # a host that cannot is refused when connecting, in words

    def label(self) -> str:
        """What the status bar says: the host's GPU and the host."""
        gpus = self.gpu_names()
        backend = _("CPU interpreter") if self.runs_on_cpu(False) or not gpus else gpus[0]
        return _("{backend} on {host}").format(backend=backend, host=self.name)

    # ---- the session ---------------------------------------------------------------------------

    def connect(self) -> None:
        """Open the session (setting the host up on first contact); RemoteError when the host
        cannot be used."""
        self._live_session()

    def _live_session(self) -> _Session:
        """The session, opened again if it was lost or closed."""
        with self._lock:
            if self._session is not None and self._session.alive:
                return self._session
            self._session = None
            session = _Session(self)
            try:
                session.open()
            except BaseException:
                session.close()
                raise
            self._session, self.bundle = session, session.bundle
            self.connects += 1
        if self.welcome is not None and self.welcome.busy and self.on_progress is not None:
            self.on_progress(messages.busy(self.name, self.welcome.busy))
        return session

    def close(self) -> None:
        """Let the session go: the host ends whatever of it is left."""
        with self._lock:
            session, self._session = self._session, None
        if session is not None:
            session.close()

    def __enter__(self) -> RemoteHost:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def supervise(
        self,
        cmd: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        cancel: threading.Event | None = None,
        on_output: Callable[[bytes], None] | None = None,
        on_events: Callable[[bytes], None] | None = None,
        memory_limit: int | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        warm=None,
        returns: list[Path] | tuple = (),
    ) -> Ended:
        """Run `cmd` on the host to its end (or its limits) and say how it ended: the same
        arguments and answers as tutor.run.supervisor.supervise."""
        try:
            session = self._live_session()
        except RemoteError as exc:
            return Ended(COULD_NOT_START, 127, str(exc))
        run_id = uuid.uuid4().hex
        replies = session.expect(run_id)
        bundle = session.bundle  # the session's: what its host has
        output = _LineTranslator(bundle.local_text, on_output)
        deadline = time.monotonic() + startup_timeout + timeout + HOST_GRACE_S
        cancelled_at: float | None = None
        try:
            # One run's files, then the run, before another run's: the host takes them in order.
            with self._sending:
                prepared = bundle.prepare(cmd, env, cwd, list(returns))
                run = Run(
                    run_id,
                    prepared.cmd,
                    prepared.cwd,
                    prepared.env,
                    prepared.unset,
                    timeout,
                    startup_timeout,
                    memory_limit if memory_limit is not None else self.memory_limit(),
                    on_events is not None,
                    warm is not None,
                    list(prepared.returns),
                )
                session.send(*([prepared.files] if prepared.files else []), run)
            while True:
                if cancel is not None and cancel.is_set() and cancelled_at is None:
                    cancelled_at = time.monotonic()
                    session.send(Cancel(run_id))
                if cancelled_at is not None and time.monotonic() - cancelled_at > CANCEL_WAIT_S:
                    self.close()  # the host ends the run when its session goes
                    return Ended(CANCELLED, -9)
                if time.monotonic() > deadline:
                    self.close()
                    return Ended(COULD_NOT_START, 127, messages.silent(self.name))
                try:
                    reply = replies.get(timeout=0.1)
                except queue.Empty:
                    continue
                if isinstance(reply, Output):
                    output.feed(unpack(reply.data))
                elif isinstance(reply, Event) and on_events is not None:
                    on_events(bundle.local_json(reply.line.encode("utf-8")))
                elif isinstance(reply, Done):
                    output.flush()
                    _write_returns(reply.files, prepared.returns)
                    return Ended(
                        reply.how,
                        reply.returncode,
                        reply.error,
                        reply.peak_rss,
                        reply.timed,
                        reply.warm,
                    )
                elif isinstance(reply, _Lost):
                    output.flush()
                    return Ended(COULD_NOT_START, 127, reply.reason)
        except BaseException:  # Ctrl-C, SIGTERM: nothing of the run may outlive this call
            try:
                session.send(Cancel(run_id))
            finally:
                self.close()
            raise
        finally:
            session.forget(run_id)


def _write_returns(files: dict[str, str], returns: dict[str, Path]) -> None:
    for remote, data in files.items():
        local = returns.get(remote)
        if local is not None:
            local.write_bytes(unpack(data))


class _LineTranslator:
    """Hands on output whole lines at a time, the host's paths made this machine's."""

    def __init__(self, translate: Callable[[bytes], bytes], sink) -> None:
        self.translate, self.sink, self.partial = translate, sink, b""

    def feed(self, chunk: bytes) -> None:
        if self.sink is None:
            return
        lines, newline, self.partial = (self.partial + chunk).rpartition(b"\n")
        if newline:
            self.sink(self.translate(lines + newline))

    def flush(self) -> None:
        if self.sink is not None and self.partial:
            self.sink(self.translate(self.partial))
        self.partial = b""


class _Session:
    """One ssh process: the bootstrap, then the agent at the other end."""

    def __init__(self, host: RemoteHost) -> None:
        self.host = host
        self.bundle = Bundle(host.paths)
        self.key = new_key()
        self.process: subprocess.Popen | None = None
        self.control: queue.Queue = queue.Queue()  # messages that belong to no run
        self.runs: dict[str, queue.Queue] = {}
        self.runs_lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.stderr: list[str] = []
        self.stderr_done = False
        self.lost: str | None = None
        self.closed = threading.Event()

    @property
    def alive(self) -> bool:
        return self.lost is None and self.process is not None and self.process.poll() is None

    def open(self) -> None:
        host = self.host
        command = ssh_command(host.target.host, remote_command(host.target.python))
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                **_own_group(),
            )
        except OSError as exc:
            raise RemoteError(messages.no_ssh(command[0], exc.strerror or str(exc))) from None
        threading.Thread(target=self._read, name="tutor-remote-read", daemon=True).start()
        threading.Thread(target=self._read_errors, name="tutor-remote-err", daemon=True).start()
        self.send(
            Hello(
                version=__version__,
                key=self.key.hex(),
                course=course_name(host.paths.root),
                python=host.target.python,
                cpu=host.cpu,
                warm=host.keep_warm,
                requirements=HOST_REQUIREMENTS,
                torch_index=os.environ.get(TORCH_INDEX_VARIABLE, ""),
                pip_args=os.environ.get(PIP_VARIABLE, "").split(),
                cache=os.environ.get(CACHE_VARIABLE, ""),
            )
        )
        host.welcome = self._until(Welcome, setup=True)
        self.send(self.bundle.manifest())
        need = self._until(Need)
        if need.shas:
            self.send(self.bundle.contents(need.shas))
        self._until(Synced)
        self.bundle.attach(host.welcome.root, host.welcome.python)
        host.serving = self._until(Serving)
        threading.Thread(target=self._ping, name="tutor-remote-ping", daemon=True).start()

    def _until(self, kind: type, *, setup: bool = False):
        """The next message of `kind` from the host, saying its progress on the way; a
        RemoteError for a refusal, or when the session ends or says nothing for too long (the
        environment's set-up, `setup`, may take as long as pip does)."""
        deadline = None if setup else time.monotonic() + CONNECT_TIMEOUT_S
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise RemoteError(messages.silent(self.host.name))
            try:
                message = self.control.get(timeout=left)
            except queue.Empty:
                continue
            if isinstance(message, kind):
                return message
            if isinstance(message, Progress):
                if self.host.on_progress is not None:
                    self.host.on_progress(messages.progress(self.host.name, message))
            elif isinstance(message, Refusal):
                raise RemoteError(messages.refusal(self.host.name, message))
            elif isinstance(message, _Lost):
                raise RemoteError(message.reason)

    def send(self, *messages_: object) -> None:
        data = b"".join(m.encode() for m in messages_)  # type: ignore[attr-defined]
        try:
            with self.write_lock:
                assert self.process is not None and self.process.stdin is not None
                self.process.stdin.write(data)
                self.process.stdin.flush()
        except (OSError, ValueError):  # ValueError: closed already
            self._lose(messages.lost(self.host.name, self._ssh_says()))

    def expect(self, run_id: str) -> queue.Queue:
        replies: queue.Queue = queue.Queue()
        with self.runs_lock:
            self.runs[run_id] = replies
            if self.lost is not None:
                replies.put(_Lost(self.lost))
        return replies

    def forget(self, run_id: str) -> None:
        with self.runs_lock:
            self.runs.pop(run_id, None)

    def _read(self) -> None:
        """The host's lines, their seals checked, each to the run it is for."""
        assert self.process is not None and self.process.stdout is not None
        sealed = SealedLines(self.key, self._dispatch)
        stream = self.process.stdout
        while True:
            chunk = stream.read1(1 << 16)
            if not chunk:
                break
            sealed.feed(chunk)
        self.process.wait()
        waited = time.monotonic() + 1.0  # its last words on stderr come on their own pipe
        while not (self.closed.is_set() or self.stderr_done) and time.monotonic() < waited:
            time.sleep(0.05)
        self._lose(self._why_ended())

    def _read_errors(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self.stderr = [*self.stderr[-19:], line]
        self.stderr_done = True

    def _dispatch(self, line: bytes) -> None:
        message = decode(line)
        run_id = message.id if isinstance(message, Output | Event | Done) else None
        if run_id is None:
            self.control.put(message)
            return
        with self.runs_lock:
            replies = self.runs.get(run_id)
        if replies is not None:
            replies.put(message)

    def _lose(self, reason: str) -> None:
        with self.runs_lock:
            if self.lost is not None:
                return
            self.lost = reason
            waiting = list(self.runs.values())
        self.control.put(_Lost(reason))
        for replies in waiting:
            replies.put(_Lost(reason))

    def _ssh_says(self) -> str:
        return self.stderr[-1] if self.stderr else ""

    def _why_ended(self) -> str:
        """Why the session ended, in words: the loader's and the shell's exit statuses say
        what is missing on the host; ssh's last line says the rest."""
        assert self.process is not None
        return messages.ended(
            self.host.name, self.host.target.python, self.process.returncode, self.stderr
        )

    def _ping(self) -> None:
        while not self.closed.wait(PING_S):
            if self.lost is not None:
                return
            self.send(Ping())

    def close(self) -> None:
        """Close the host's input (its agent ends everything there), then ssh itself."""
        self.closed.set()
        self._lose(messages.closed(self.host.name))
        process = self.process
        if process is None:
            return
        try:
            with self.write_lock:
                if process.stdin is not None:
                    process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _own_group() -> dict:
    """ssh in a process group of its own: the terminal's Ctrl-C reaches the tutor, which ends
    the run on the host first, not ssh, which would drop it on the floor."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}
