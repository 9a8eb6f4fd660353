"""The host's first moments: what the ssh command runs, before the host has anything of the tutor.

    ssh -T HOST python3 -c 'LOADER'      (tutor.remote.ship writes LOADER: these modules, inline)

It reads the tutor's `Hello` on its standard input, then, saying each step as `Progress`:
looks at the host (Python, GPUs, driver: tutor.remote.hostenv) and refuses what cannot work;
finds or sets up the environment in the host's cache folder for this version of the tutor
(~/.cache/kernel-drills-tutor/VERSION/env), unless the learner named a Python of their own;
answers `Welcome`; takes the bundle (the tutor package itself and the course's files, by their
hashes: only what the host's store lacks travels) and places it in the course's folder there;
and then becomes the agent (tutor.remote.agent) with that environment's Python, on the same
standard input and output, in the course's folder, so the runs import the tutor that was just
shipped: the same version as the learner's. The session's key goes to the agent through a
pipe (tutor.run.seal.key_pipe), never through its command line or environment.

Until the agent answers, the tutor sends a line only when it was asked for one, so nothing is
left unread here when this process becomes the agent.

Standard library only (tutor.remote.protocol says why).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

from tutor.remote import hostenv
from tutor.remote.protocol import (
    PROTOCOL,
    Files,
    Hello,
    Need,
    Progress,
    Refusal,
    Synced,
    Welcome,
    decode,
    unpack,
)
from tutor.remote.store import BadBundle, Store
from tutor.run.seal import key_pipe, seal

DEFAULT_CACHE = "~/.cache/kernel-drills-tutor"
AGENT = "tutor.remote.agent"


class Lines:
    """Lines read from a descriptor without reading past the one asked for more than the
    tutor has sent (it sends nothing unasked: see the module's docstring)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""

    def line(self) -> bytes:
        while b"\n" not in self.buffer:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:  # the tutor is gone
                raise SystemExit(0)
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


class Channel:
    """The host's standard output, every line sealed with the session's key."""

    def __init__(self, key: bytes, fd: int = 1) -> None:
        self.key, self.fd = key, fd

    def send(self, message) -> None:
        data = seal(self.key, message.encode().rstrip(b"\n")) + b"\n"
        while data:
            data = data[os.write(self.fd, data) :]


def course_folder(hello: Hello) -> tuple[Path, Path]:
    """The host's cache folder for this version of the tutor, and the course's folder in it."""
    base = Path(hello.cache or DEFAULT_CACHE).expanduser() / hello.version
    return base, base / "courses" / hello.course


def main() -> None:
    lines = Lines(0)
    hello = decode(lines.line())
    if not isinstance(hello, Hello):
        raise SystemExit(2)
    channel = Channel(bytes.fromhex(hello.key))
    base, root = course_folder(hello)
    try:
        _set_up_and_serve(lines, channel, hello, base, root)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # The learner's files are all on their side: say what is full, end the session.
        channel.send(Refusal("disk-full", {"path": str(base), "detail": exc.strerror or ""}))


def _set_up_and_serve(lines: Lines, channel: Channel, hello: Hello, base: Path, root: Path) -> None:
    try:
        if hello.protocol != PROTOCOL:
            raise hostenv.Refused("protocol", theirs=hello.protocol, ours=PROTOCOL)
        facts = hostenv.host_facts()
        hostenv.check_host(facts, cpu=hello.cpu)
        if hello.python:  # this process is that Python (the ssh command started it)
            hostenv.check_python(hostenv.python_facts(), facts, cpu=hello.cpu)
            python = sys.executable
        else:
            index = hello.torch_index or hostenv.torch_index(facts, cpu=hello.cpu)
            python = hostenv.ensure_env(
                base / "env",
                hello.requirements,
                index,
                hello.pip_args,
                lambda step, detail: channel.send(Progress(step, detail)),
            )
    except hostenv.Refused as refused:
        channel.send(Refusal(refused.reason, refused.facts))
        return
    channel.send(
        Welcome(
            root=str(root),
            python=python,
            python_version=facts["python_version"],
            gpus=facts["gpus"],
            has_gpu=facts["has_gpu"],
            driver=facts["driver"],
            cuda=facts["cuda"],
            memory=facts["memory"],
            busy=facts["busy"],
            platform=facts["platform"],
        )
    )
    _take_bundle(lines, channel, Store(base / "store"), root)
    _become_agent(python, root, bytes.fromhex(hello.key), hello)


def _take_bundle(lines: Lines, channel: Channel, store: Store, root: Path) -> None:
    manifest = decode(lines.line())
    if not isinstance(manifest, Files):
        raise SystemExit(2)
    missing = store.missing(manifest.entries.values())
    channel.send(Need(missing))
    if missing:
        contents = decode(lines.line())
        if not isinstance(contents, Files):
            raise SystemExit(2)
        try:
            for sha, data in contents.blobs.items():
                store.add(sha, unpack(data))
        except (BadBundle, ValueError) as exc:
            channel.send(Refusal("bad-bundle", {"detail": str(exc)}))
            raise SystemExit(0) from None
    root.mkdir(parents=True, exist_ok=True)
    channel.send(Synced(store.place(root, manifest.entries)))


def _become_agent(python: str, root: Path, key: bytes, hello: Hello) -> None:
    key_fd = key_pipe(key)
    os.set_inheritable(key_fd, True)
    os.chdir(root)  # `python -m` puts it first on sys.path: the tutor shipped here is imported
    flags = [*(["--cpu"] if hello.cpu else []), *(["--warm"] if hello.warm else [])]
    os.execv(python, [python, "-m", AGENT, str(key_fd), *flags])


if __name__ == "__main__":
    main()
