"""The tutor's side of the warm process (tutor.zygote): start it, and fork runs from it.

    pool = WarmPool(state_dir)     # starts `python -m tutor.zygote` in the background
    runner = Runner(catalogue, warm=pool)

`WarmPool.start` gives a Popen-like handle (pid, stdout, poll, wait, returncode) for a run
(a drill's tests, or a bench) forked from the warm process, so the supervisor treats a warm
child exactly as a cold one. When the warm process is not up yet (it is still importing torch),
has died, or cannot serve (it refuses GPU work if CUDA started in it), `start` returns None and
the run goes cold: no run waits longer than a cold run would. A dead warm process is started
again for the next run. GPU runs are forked too: the warm process never starts CUDA, each run
starts its own (tutor.zygote).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tutor.gpu import machine_has_gpu

EVENTS_FD = 200  # where a warm child finds its events pipe: far above any fd it opens itself


def runs_on_cpu(force_cpu: bool) -> bool:
    """Whether a run's kernels go to the CPU interpreter: asked for, or no GPU here."""
    return force_cpu or not machine_has_gpu()


class WarmChild:
    """A run forked by the warm process; it looks like a subprocess.Popen to the supervisor."""

    def __init__(self, pool: WarmPool, conn: socket.socket, pid: int, stdout) -> None:
        self.pool, self.conn, self.pid, self.stdout = pool, conn, pid, stdout
        self.returncode: int | None = None
        self._buffer = b""

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read(block=False)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("warm run", timeout)
            if not self._read(block=True):
                self.returncode = -9  # the warm process went away: the run went with it
        self.conn.close()
        return self.returncode

    def _read(self, block: bool) -> bool:
        """Take the exit message if it came; False when the connection is gone."""
        self.conn.setblocking(block)
        if block:
            self.conn.settimeout(0.1)
        try:
            chunk = self.conn.recv(4096)
        except (BlockingIOError, TimeoutError):
            return True
        except OSError:
            return False
        if not chunk:
            if self.returncode is None and not self._alive():
                self.returncode = -9
            return False
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if message.get("exit") == self.pid:
                self.returncode = int(message["returncode"])
        return True

    def _alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
            return True
        except OSError:
            return False


class WarmPool:
    """One warm process for one course, started in the background and restarted on demand.

    The app owns one (its socket is .tutor/warm-<app pid>-<backend>.sock); `tutor check`
    borrows it with `WarmPool.find` while the app is open, and runs cold otherwise.

    A warm process serves one backend, `cpu` (the interpreter) or `cuda`, because Triton's own
    library functions (tl.sum, tl.max) are made for the interpreter or for the compiler when
    triton is imported: `cpu=None` picks the machine's (the GPU where NVML finds one).
    """

    def __init__(
        self,
        state_dir: Path,
        python: str = sys.executable,
        *,
        launch: bool = True,
        cpu: bool | None = None,
    ) -> None:
        self.cpu = runs_on_cpu(False) if cpu is None else cpu
        self.path = state_dir / f"warm-{os.getpid()}-{self.backend}.sock"
        self.python = python
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.facts: dict[str, Any] = {}  # the warm process's "ready" line (tutor.zygote)
        self.owner: int | None = os.getpid()
        if launch:
            self.launch()

    @property
    def backend(self) -> str:
        return "cpu" if self.cpu else "cuda"

    @classmethod
    def find(cls, state_dir: Path, *, cpu: bool = False) -> WarmPool | None:
        """A client of the warm process another tutor (the app) keeps up for the backend a run
        with `cpu` (--cpu) takes, if there is one.

        TUTOR_NO_WARM=1 in the environment says no: every run starts cold.
        """
        if os.environ.get("TUTOR_NO_WARM") == "1":
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
            return pool
        return None

    def launch(self) -> None:
        """Start the warm process; `ready` is set once it serves (a few seconds later)."""
        self.ready.clear()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        env.pop("TRITON_INTERPRET", None)
        self.process = subprocess.Popen(
            [self.python, "-m", "tutor.zygote", str(self.path), self.backend],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        process = self.process

        def wait_ready() -> None:
            assert process.stdout is not None
            try:
                facts = json.loads(process.stdout.readline())
            except ValueError:
                return  # it died while importing: runs stay cold until it is started again
            if isinstance(facts, dict) and facts.get("ready"):
                self.facts = facts
                self.ready.set()

        threading.Thread(target=wait_ready, name="tutor-warm-ready", daemon=True).start()

    @property
    def up(self) -> bool:
        if self.process is None:  # borrowed: up while its owner is and its socket is there
            return self.ready.is_set() and self.path.exists()
        return self.ready.is_set() and self.process.poll() is None

    def start(
        self,
        module: str,
        args: list[str],
        cwd: Path,
        env: dict[str, str],
        output_write: int,
        events_write: int | None,
    ) -> WarmChild | None:
        """Fork `python -m MODULE ARGS`; None when the warm process cannot take it now."""
        with self.lock:
            if self.process is not None and self.process.poll() is not None:
                self.launch()  # it died: warm again for a later run, cold for this one
                return None
            if not self.up:
                return None
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                conn.connect(str(self.path))
                request = {
                    "module": module,
                    "args": args,
                    "cwd": str(cwd),
                    "env": env,
                    "events_fd": EVENTS_FD,
                }
                fds = [output_write, events_write if events_write is not None else output_write]
                socket.send_fds(conn, [json.dumps(request).encode()], fds)
                line = b""
                conn.settimeout(30)
                while not line.endswith(b"\n"):
                    chunk = conn.recv(1)
                    if not chunk:
                        raise OSError("the warm process closed the connection")
                    line += chunk
                reply = json.loads(line)
                if "refused" in reply:
                    raise OSError(reply["refused"])
                pid = int(reply["pid"])
            except (OSError, ValueError, KeyError):
                conn.close()
                return None
        return WarmChild(self, conn, pid, None)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.path.exists():
            self.path.unlink()
