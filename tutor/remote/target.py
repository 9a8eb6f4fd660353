"""Which machine runs a course's kernels: this one, or a host reached over ssh.

In this order: `--on HOST` on the command line, then $TUTOR_REMOTE, then the host remembered in
the course's `.tutor/remote`, then this machine. `--on HOST` (and `--python PATH`, a Python of
the learner's own on that host) is remembered for the next command, as the app remembers the
language; `--on local` forgets it and runs here again.

HOST is whatever `ssh` takes: `user@host`, `host:port` is not (use an alias in ~/.ssh/config
for a port, a jump host or a key).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from tutor.lang.i18n import _

VARIABLE = "TUTOR_REMOTE"
REMEMBERED = "remote"  # the file under .tutor/ that keeps the host
HERE = "local"  # `--on local`: this machine


class TargetError(ValueError):
    """A host name ssh could not take; the message says why."""


@dataclass(frozen=True)
class Target:
    host: str
    python: str = ""  # "" for the environment the tutor sets up there


def _checked(host: str, where: str) -> str:
    host = host.strip()
    if host.startswith("-") or any(c.isspace() or ord(c) < 32 for c in host):
        raise TargetError(
            _("{where} {host} is not a host name ssh takes (user@host, or an alias)").format(
                where=where, host=repr(host)
            )
        )
    return host


def remembered(state_dir: Path) -> Target | None:
    """The host remembered for the course, or None."""
    try:
        raw = json.loads((state_dir / REMEMBERED).read_text(encoding="utf-8"))
        return Target(_checked(str(raw["host"]), "the host"), str(raw.get("python") or ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def choose(
    on: str | None,
    python: str | None,
    state_dir: Path,
    env: Mapping[str, str] | None = None,
) -> Target | None:
    """Where this command's kernels run (None: here); see the module's docstring."""
    env = os.environ if env is None else env
    if on is not None:
        target = None if on.strip() == HERE else Target(_checked(on, "--on"), python or "")
    elif env.get(VARIABLE, "").strip():
        value = env[VARIABLE].strip()
        target = None if value == HERE else Target(_checked(value, VARIABLE), python or "")
    else:
        kept = remembered(state_dir)
        target = kept if kept is None or python is None else Target(kept.host, python)
    return target


def remember(state_dir: Path, target: Target | None) -> None:
    """Keep `target` for the course's next command (None: forget it); the caller checks the
    folder for links first."""
    path = state_dir / REMEMBERED
    if target is None:
        path.unlink(missing_ok=True)
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(target)) + "\n", encoding="utf-8")
