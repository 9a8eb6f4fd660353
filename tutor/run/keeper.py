"""The keeper: the process between the tutor and a run, out of the learner's code's reach.

    python -m tutor.run.keeper CHANNEL_FD -- python -m pytest ...  (cold: tutor.run.supervisor)
    keep(channel, start_run, run_id)                            (warm: tutor.run.zygote)

The tutor never is the parent of the learner's code. It starts a keeper, and the keeper starts
the run (a drill's tests or a bench) as its only child, in the process group the keeper leads,
which the tutor ends to end the run. Code that signals its parent (`os.kill(os.getppid(), 9)`,
or SIGSTOP) hits the keeper: the tutor, and the app's terminal, are out of its reach, and the
tutor says what the code did (the keeper ended, or stopped, before it reported the run's end).
A warm run's keeper is forked from the warm process, so a warm process that dies or is stopped
during a run takes nothing of the run with it: the keeper still reports to the tutor.

The keeper talks to the tutor on a stream socket, the channel, in JSON lines:

    {"pid": KEEPER_PID}                       at once (the warm process's answer to a request)
    {"exit": RUN_PID, "returncode": N}        when the run ended (N < 0: killed by signal -N)

The tutor writes nothing on it. Its end closing means the tutor is gone (it exited, or was
killed): the keeper then ends the run and every process that carries the run's mark (RUN_ID).
`Kept` is the tutor's side: it reads the channel, and looks like a subprocess.Popen to the
supervisor.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import NoReturn

from tutor.run.protocol import RUN_FAILED_TO_START, Ended, Started, read_reply

RUN_ID = "TUTOR_RUN_ID"  # the environment variable that marks every process of a run
CHECK_S = 1.0  # the keeper also looks at its run this often, should a SIGCHLD go astray


def keep(channel: socket.socket, start_run: Callable[[set[int]], int], run_id: str) -> NoReturn:
    """Start the run, report its end on `channel`, end it if the tutor goes; never returns.

    `start_run(drop)` forks the run and returns its pid; the run must close the descriptors in
    `drop` (the channel and the keeper's wake-up pipe) unless it execs, which closes them.
    """
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select below when the run ends
    _send(channel, Started(os.getpid()))
    ours = {channel.fileno(), wake_read, wake_write}
    try:
        run = start_run(ours)
    except OSError:  # fork failed (no memory, too many processes)
        _send(channel, Ended(-1, RUN_FAILED_TO_START))
        os._exit(0)
    let_go(ours)
    while True:
        ready, _, _ = select.select([channel, wake_read], [], [], CHECK_S)
        if wake_read in ready:
            os.read(wake_read, 4096)
        pid, status = os.waitpid(run, os.WNOHANG)
        if pid == run:
            _send(channel, Ended(run, os.waitstatus_to_exitcode(status)))
            os._exit(0)
        if channel in ready and not _still_there(channel):
            _end_run(run_id)


def _send(channel: socket.socket, message: Started | Ended) -> None:
    try:
        channel.sendall(message.encode())
    except OSError:
        pass  # the tutor is gone: the next look at the channel ends the run


def _still_there(channel: socket.socket) -> bool:
    """False once the tutor's end of the channel is closed (the tutor ended, however)."""
    try:
        return bool(channel.recv(4096))
    except BlockingIOError:
        return True
    except OSError:
        return False


def _end_run(run_id: str) -> NoReturn:
    """The tutor is gone: every other process of the run, then the keeper's group, itself too."""
    from tutor.run.supervisor import run_processes

    for process in run_processes(os.getpid(), run_id):
        try:
            process.kill()
        except Exception:  # noqa: BLE001 - psutil's errors: gone already, or not ours to end
            pass
    os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(137)  # not reached: the signal above ends this process too


def let_go(keep_fds: set[int]) -> None:
    """Close every descriptor but `keep_fds`, and point 0, 1 and 2 at /dev/null: the run holds
    the output and events pipes, and the tutor must see them close when the run is done."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    for fd in _open_fds() - keep_fds - {0, 1, 2}:
        try:
            os.close(fd)
        except OSError:
            pass


def _open_fds() -> set[int]:
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return {int(name) for name in os.listdir(folder)}
        except OSError:
            continue
    return set(range(3, 256))


def main(argv: list[str]) -> NoReturn:
    """A cold run's keeper: `CHANNEL_FD -- COMMAND...`; the command runs as its child."""
    channel_fd, command = int(argv[0]), argv[argv.index("--") + 1 :]
    os.set_inheritable(channel_fd, False)  # the run never holds the tutor's channel

    def start(drop: set[int]) -> int:  # `drop` is close-on-exec: the exec closes it
        pid = os.fork()
        if pid == 0:
            try:
                os.execvp(command[0], command)
            finally:
                os._exit(RUN_FAILED_TO_START)
        return pid

    keep(socket.socket(fileno=channel_fd), start, os.environ.get(RUN_ID, ""))


class Kept:
    """The tutor's side of a kept run (its keeper's pid, the run's output, the channel): poll,
    wait and returncode as subprocess.Popen has them, and `lost` when the keeper ended before it
    reported the run's end (something killed the keeper: the learner's code, or whatever took
    the warm process's runs along)."""

    def __init__(
        self,
        channel: socket.socket,
        pid: int,
        stdout,
        process: subprocess.Popen | None = None,
    ) -> None:
        self.channel, self.pid, self.stdout, self.process = channel, pid, stdout, process
        self.returncode: int | None = None
        self.lost = False
        self._buffer = b""

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read(timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired("the run's keeper", timeout or 0)
            self._read(timeout=0.1 if left is None else min(left, 0.1))
        if self.process is not None:
            self.process.wait()  # the cold keeper itself; it ends right after its report
        self.channel.close()
        return self.returncode

    def _read(self, timeout: float) -> None:
        self._take_lines()
        if self.returncode is not None:
            return
        try:
            ready, _, _ = select.select([self.channel], [], [], timeout)
            chunk = self.channel.recv(4096) if ready else None
        except OSError:
            chunk = b""
        if chunk is None:
            return
        if not chunk:  # the keeper is gone, and never said how the run ended
            self.lost = True
            self.returncode = self._keepers_end()
            return
        self._buffer += chunk
        self._take_lines()

    def _take_lines(self) -> None:
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            message = read_reply(line)
            if isinstance(message, Ended):
                self.returncode = message.returncode

    def _keepers_end(self) -> int:
        if self.process is not None:
            return self.process.wait()
        return -signal.SIGKILL  # a warm keeper is not our child: how it ended is not ours to know


if __name__ == "__main__":
    main(sys.argv[1:])
