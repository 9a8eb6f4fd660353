"""An sshd on the loopback address, started by the tests, for `tutor --on HOST` without a GPU.

    server = Sshd.start(folder)        # throw-away host key, user key and config in `folder`
    server.env()                       # TUTOR_SSH etc.: the tutor reaches it as HOST
    server.stop()

The host is this machine, as the user running the tests, behind the alias HOST of an ssh
configuration of its own (`ssh -F`): the learner's ~/.ssh is never read or written. The shared
connections' sockets go to a short folder of their own (a socket's path has about 100 bytes).
`Sshd.missing()` says why there can be none here, for a skip.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

HOST = "tutor-test"
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
INSTALL = "apt-get install -y openssh-server openssh-client"


@dataclass
class Sshd:
    folder: Path
    port: int
    process: subprocess.Popen
    control: Path

    @staticmethod
    def missing() -> str:
        """Why no sshd can be started here ("" when one can)."""
        for program in (SSHD, "ssh", "ssh-keygen"):
            if shutil.which(program) is None and not Path(program).is_file():
                return f"{program} is not installed ({INSTALL})"
        return ""

    @classmethod
    def start(cls, folder: Path) -> Sshd:
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("host_key", "user_key"):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)],
                check=True,
                stdin=subprocess.DEVNULL,
            )
        shutil.copy(folder / "user_key.pub", folder / "authorized_keys")
        (folder / "authorized_keys").chmod(0o600)
        if os.geteuid() == 0:  # sshd run as root needs its privilege separation folder
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        port = _free_port()
        (folder / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
            f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPidFile {folder / 'sshd.pid'}\n"
            "UsePAM no\nStrictModes no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
            "LogLevel ERROR\n"
        )
        (folder / "ssh_config").write_text(_client_config(folder, port, "user_key"))
        (folder / "stranger_config").write_text(_client_config(folder, port, "host_key"))
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(folder / "sshd_config")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(folder / "sshd.log", "wb"),  # noqa: SIM115 - the server's, while it runs
            start_new_session=True,
        )
        control = Path(tempfile.mkdtemp(prefix="kdt-", dir="/tmp"))
        server = cls(folder, port, process, control)
        server._wait_listening()
        return server

    def _wait_listening(self, seconds: float = 20.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = (self.folder / "sshd.log").read_text(errors="replace")
                raise RuntimeError(f"sshd ended at once: {log}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("sshd is not listening")

    def env(self, *, multiplex: bool = True, stranger: bool = False) -> dict[str, str]:
        """What the tutor's environment needs to reach the server as HOST; `stranger`: with a
        key the server does not know."""
        config = self.folder / ("stranger_config" if stranger else "ssh_config")
        return {
            "TUTOR_SSH": f"ssh -F {config}",
            "TUTOR_SSH_CONTROL": str(self.control),
            "TUTOR_SSH_MULTIPLEX": "1" if multiplex else "0",
        }

    def stop(self) -> None:
        for socket_path in self.control.glob("*"):
            subprocess.run(
                ["ssh", "-F", str(self.folder / "ssh_config"), "-o", f"ControlPath={socket_path}"]
                + ["-O", "exit", HOST],
                capture_output=True,
                check=False,
                timeout=30,
            )
        try:
            below = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            below = []
        for process in [*below, self.process]:
            try:
                process.kill()
            except psutil.Error:
                pass
        self.process.wait(timeout=30)
        shutil.rmtree(self.control, ignore_errors=True)


def _client_config(folder: Path, port: int, key: str) -> str:
    return (
        f"Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {folder / key}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {folder / 'known_hosts'}\n  StrictHostKeyChecking accept-new\n"
        "  LogLevel ERROR\n"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
