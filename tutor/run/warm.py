"""The tutor's side of the warm process (tutor.run.zygote): start it, keep it, and fork runs from
it.

    pool = WarmPool(state_dir)     # starts `python -m tutor.run.zygote` in the background
    runner = Runner(catalogue, warm=pool)

`WarmPool.start` gives the tutor.run.keeper.Kept of a run (a drill's tests, or a bench) forked from
the warm process, so the supervisor treats a warm run exactly as a cold one. When the warm
process is not up yet (it is still importing torch), has died, or cannot serve (it refuses GPU
work if CUDA started in it), `start` returns None and the run goes cold: no run waits longer
than a cold run would. GPU runs are forked too: the warm process never starts CUDA, each run
starts its own (tutor.run.zygote).

A warm process that does not answer within ANSWER_TIMEOUT_S (or is found stopped, SIGSTOP) is
retired: the run goes cold, the process is killed, and its owner starts another at once; so is
one that died after it served. Its runs in flight lose nothing: each has its own keeper.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

import psutil

from tutor.course.paths import CoursePaths, LinkRefused, refuse_links
from tutor.run.gpu import machine_has_gpu
from tutor.run.keeper import Kept
from tutor.run.protocol import Ready, Refused, RunRequest, Started, read_reply

# Where a warm run finds its events pipe and its events key: far above any fd it opens itself.
# A warm process answers a request with a fork (milliseconds; a second on a very busy machine):
# past this it is stopped or stuck, and a cold run is the quicker way.
ANSWER_TIMEOUT_S = 5.0


def runs_on_cpu(force_cpu: bool) -> bool:
    """Whether a run's kernels go to the CPU interpreter: asked for, or no GPU here."""
    return force_cpu or not machine_has_gpu()


class _Unresponsive(Exception):
    """The warm process took the connection but will not answer."""


class WarmPool:
    """One warm process for one course, started in the background and kept up.

    The app owns one (its socket is .tutor/warm-<app pid>-<backend>.sock); `tutor check`
    borrows it with `WarmPool.find` while the app is open, and runs cold otherwise.

    A warm process serves one backend, `cpu` (the interpreter) or `cuda`, because Triton's own
    library functions (tl.sum, tl.max) are made for the interpreter or for the compiler when
    triton is imported: `cpu=None` picks the machine's (the GPU where NVML finds one).

    The owner starts every warm process from one thread that lives as long as the pool: the
    kernel kills a warm process when the thread that started it ends (tutor.run.zygote._die_with),
    which is how a warm process never outlives its tutor, even a stopped one after a SIGKILL.
    """

    def __init__(
        self,
        state_dir: Path,
        python: str = sys.executable,
        *,
        launch: bool = True,
        cpu: bool | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """`env`: added to the warm process's environment (the course's kernel cache, where its
        spare runs compile the kernel that starts Triton in them: tutor.run.zygote)."""
        self.cpu = runs_on_cpu(False) if cpu is None else cpu
        self.env = dict(env or {})
        self.state_dir = state_dir
        self.path = state_dir / f"warm-{os.getpid()}-{self.backend}.sock"
        self.python = python
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()
        self.ready = threading.Event()  # set while a warm process serves
        self.settled = threading.Event()  # set once the first start served, or failed
        self.facts = Ready("")  # the warm process's first line (tutor.run.protocol)
        self.owner: int | None = os.getpid()
        self.launches = 0  # warm processes started so far
        self._wanted = threading.Event()  # the keeping thread starts one when set
        self._closed = False
        if launch:
            self._wanted.set()
            threading.Thread(target=self._keep_warm, name="tutor-warm", daemon=True).start()

    @classmethod
    def for_course(cls, paths: CoursePaths, *, cpu: bool | None = None) -> WarmPool:
        """The warm process of a course: its socket in the course's state folder, and its spare
        runs compiling into the course's kernel cache, as the runs do."""
        return cls(paths.state_dir, cpu=cpu, env=paths.kernel_cache_env())

    @property
    def backend(self) -> str:
        return "cpu" if self.cpu else "cuda"

    @classmethod
    def find(cls, state_dir: Path, *, cpu: bool = False) -> WarmPool | None:
        """A client of the warm process another tutor (the app) keeps up for the backend a run
        with `cpu` (--cpu) takes, if there is one.

        TUTOR_NO_WARM=1 in the environment says no: every run starts cold. So does a state
        folder that is a link: a socket there could be anyone's, and would get the run's
        environment.
        """
        if os.environ.get("TUTOR_NO_WARM") == "1":
            return None
        try:
            refuse_links(state_dir, state_dir.parent)
        except LinkRefused:
            return None
        backend = "cpu" if runs_on_cpu(cpu) else "cuda"
        for path in sorted(state_dir.glob(f"warm-*-{backend}.sock")):
            try:
                owner = int(path.stem.removeprefix("warm-").removesuffix(f"-{backend}"))
                os.kill(owner, 0)
            except (ValueError, OSError):
                continue  # left by a tutor that is gone
            pool = cls(state_dir, launch=False, cpu=backend == "cpu")
            pool.path, pool.owner = path, owner
            pool.ready.set()
            pool.settled.set()
            return pool
        return None

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the first warm process serves (or could not start); whether it serves."""
        self.settled.wait(timeout)
        return self.ready.is_set()

    def _keep_warm(self) -> None:
        """The keeping thread: start a warm process when one is wanted, and another at once
        when one that served ends (retired, killed); one that never served waits for a run to
        ask again, so a warm process that cannot start is not started over and over."""
        while True:
            self._wanted.wait()
            self._wanted.clear()
            self.settled.clear()
            process = self._launch()
            served = process is not None and self._wait_served(process)
            self.settled.set()
            if process is None:
                if self._closed:
                    return
                continue
            process.wait()
            if served and not self._closed:
                self.settled.clear()  # before `ready`: a waiter sees "not yet", never "failed"
                self._wanted.set()
            self.ready.clear()
            if self._closed:
                return

    def _launch(self) -> subprocess.Popen | None:
        """Start a warm process, or None: closed, or its socket cannot be made inside the course
        (a link on the way, a read-only course folder), and every run goes cold."""
        with self.lock:
            if self._closed:
                return None
            try:
                refuse_links(self.path, self.state_dir.parent)
                self.state_dir.mkdir(parents=True, exist_ok=True)
            except OSError:
                return None
            env = dict(os.environ, **self.env, PYTHONDONTWRITEBYTECODE="1")
            env.pop("TRITON_INTERPRET", None)
            command = [self.python, "-m", "tutor.run.zygote", str(self.path), self.backend]
            self.process = subprocess.Popen(
                [*command, str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
            self.launches += 1
            return self.process

    def _wait_served(self, process: subprocess.Popen) -> bool:
        """Read the warm process's "ready" line; whether it came (else it died importing)."""
        assert process.stdout is not None
        facts = Ready.parse(process.stdout.readline())
        if facts is None:
            return False
        self.facts = facts
        self.ready.set()
        return True

    @property
    def up(self) -> bool:
        if self.process is None:  # borrowed: up while its owner is and its socket is there
            return self.ready.is_set() and self.path.exists()
        return self.ready.is_set() and self.process.poll() is None

    def start(
        self, module: str, args: list[str], cwd: Path, env: dict[str, str], fds: list[int]
    ) -> Kept | None:
        """Fork `python -m MODULE ARGS` (its output, events and events key on `fds`), or None
        when the warm process cannot take it now."""
        with self.lock:
            if self.process is not None and self.process.poll() is not None:
                self._wanted.set()  # it never served, or died: warm again for a later run
            if not self.up:
                return None
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(ANSWER_TIMEOUT_S)
            server: int | None = None
            try:
                conn.connect(str(self.path))
                server = _peer_pid(conn)
                if _stopped(server):
                    raise _Unresponsive
                request = RunRequest(module, args, str(cwd), env)
                socket.send_fds(conn, [request.encode()], fds)
                reply = read_reply(_first_line(conn))
                if isinstance(reply, Refused):
                    raise OSError(reply.reason)
                if not isinstance(reply, Started):
                    raise ValueError("the warm process answered something else")
                pid = reply.pid
            except (_Unresponsive, TimeoutError):
                conn.close()
                self._retire(server)
                return None
            except (OSError, ValueError, KeyError):
                conn.close()
                return None
        conn.settimeout(None)
        return Kept(conn, pid, None)

    def _retire(self, server: int | None) -> None:
        """End a warm process that does not answer, so that another takes its place: ours is
        started again by the keeping thread; another tutor's (the app's) is started again by
        its owner, and is ended here only when it is that socket's warm process for sure."""
        self.ready.clear()
        if self.process is not None:
            self.process.kill()
            return
        if server is not None and _serves(server, self.path):
            try:
                os.kill(server, signal.SIGKILL)
            except OSError:
                pass

    def close(self) -> None:
        with self.lock:
            self._closed = True
            process = self.process
        self._wanted.set()  # the keeping thread wakes, and ends
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if self.process is not None and self.path.exists():  # ours, not a borrowed one's
            self.path.unlink()


def _peer_pid(conn: socket.socket) -> int | None:
    """The pid of the process listening at the other end of a connected Unix socket."""
    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):  # AttributeError: no SO_PEERCRED on this platform
        return None
    pid = struct.unpack("3i", raw)[0]
    return pid or None


def _stopped(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        return psutil.Process(pid).status() == psutil.STATUS_STOPPED
    except psutil.Error:
        return False


def _serves(pid: int, path: Path) -> bool:
    """Whether `pid` is a warm process (tutor.run.zygote) serving the socket at `path`."""
    try:
        command = psutil.Process(pid).cmdline()
    except psutil.Error:
        return False
    return "tutor.run.zygote" in command and str(path) in command


def _first_line(conn: socket.socket) -> bytes:
    """One line read byte by byte, so nothing after it (the run's end) is taken from Kept."""
    line = b""
    while not line.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk:
            raise OSError("the warm process closed the connection")
        line += chunk
    return line
