"""The ssh command the tutor runs: the system's own `ssh`, so ~/.ssh/config, agents, ProxyJump
and a ControlMaster the learner set up all work as they do for them.

    argv = ssh_command("gpu-box", remote_command)

- `-T`: no terminal, so the output is the host's JSON and nothing else (without one sshd sends
  no hangup when the connection goes: tutor.remote.agent watches its input instead);
- BatchMode: never a password prompt the tutor could not answer (a key, or an agent);
- ServerAliveInterval and ServerAliveCountMax: a dead connection is found within a minute, and
  ConnectTimeout: an unreachable host within half of one;
- ControlMaster=auto, ControlPath, ControlPersist: one connection reused by every check, across
  `tutor check` commands too; not on Windows (its OpenSSH has no multiplexing, and breaks on a
  ControlMaster setting), not when the learner's own configuration has one (`ssh -G` says),
  and not with TUTOR_SSH_MULTIPLEX=0.

$TUTOR_SSH replaces `ssh` itself (a command line: `ssh -F ~/lab_config`), and
$TUTOR_SSH_CONTROL names the folder of the shared connections' sockets.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

SSH_VARIABLE = "TUTOR_SSH"
MULTIPLEX_VARIABLE = "TUTOR_SSH_MULTIPLEX"
CONTROL_VARIABLE = "TUTOR_SSH_CONTROL"
ALIVE_INTERVAL_S = 15
ALIVE_COUNT = 3
CONNECT_TIMEOUT_S = 30
PERSIST_S = 600  # the shared connection outlives the last check by this long
CONFIG_TIMEOUT_S = 10.0


def ssh_program() -> list[str]:
    # Windows' paths keep their backslashes (C:\Windows\System32\OpenSSH\ssh.exe).
    return shlex.split(os.environ.get(SSH_VARIABLE) or "ssh", posix=sys.platform != "win32")


def ssh_command(host: str, remote_command: str) -> list[str]:
    program = ssh_program()
    return [
        *program,
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        f"ServerAliveInterval={ALIVE_INTERVAL_S}",
        "-o",
        f"ServerAliveCountMax={ALIVE_COUNT}",
        "-o",
        f"ConnectTimeout={CONNECT_TIMEOUT_S}",
        *multiplexing(program, host),
        "--",
        host,
        remote_command,
    ]


def multiplexing(program: list[str], host: str) -> list[str]:
    """The options that share one connection between sessions, where the platform allows it
    and the learner has not set it up their own way."""
    if sys.platform == "win32" or os.environ.get(MULTIPLEX_VARIABLE) == "0":
        return []
    settings = effective_settings(program, host)
    if settings.get("controlmaster", "false") not in ("false", "no"):
        return []  # theirs, with their ControlPath
    return [
        "-o",
        "ControlMaster=auto",
        "-o",
        f"ControlPath={control_folder() / 'tutor-%C'}",
        "-o",
        f"ControlPersist={PERSIST_S}",
    ]


def effective_settings(program: list[str], host: str) -> dict[str, str]:
    """What ssh would use for `host` (`ssh -G`: it reads the configuration, connects nowhere)."""
    try:
        done = subprocess.run(
            [*program, "-G", "--", host],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CONFIG_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    settings = {}
    for line in done.stdout.splitlines():
        name, _, value = line.partition(" ")
        settings.setdefault(name.lower(), value.strip())
    return settings


def control_folder() -> Path:
    """Where the shared connections' sockets go: $TUTOR_SSH_CONTROL, else ~/.ssh, whose path
    is short enough for a socket's (about 100 bytes, with ssh's own suffix), else the tutor's
    cache folder."""
    ssh = Path.home() / ".ssh"
    folder = ssh if ssh.is_dir() else Path.home() / ".cache" / "kernel-drills-tutor"
    folder = Path(os.environ.get(CONTROL_VARIABLE) or folder)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder
