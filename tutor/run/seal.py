"""Every event line a run writes is sealed with a key that only the tutor and the plugin hold.

Why a seal, and not a hidden channel: the learner's code runs in the very process that writes
the events (tutor.run.pytest_events), and every descriptor of a process is listed in /proc/self/fd,
so no way of passing, moving or renaming the events pipe keeps the code from finding it and
writing lines of its own; a forged `{"event": "test", "outcome": "passed"}` would pass a drill
without running a kernel. So the tutor makes a fresh key for every run and hands it to the child
through a pipe of its own, never through the command line or the environment (both readable in
/proc). The plugin reads the key and closes that pipe as its session starts, before any test
module or learner file is imported; from then on the key lives only in the plugin's memory. The
tutor drops every line whose seal does not match. What this does not stop: code that digs the
key (or the plugin's writer) out of the plugin's memory, or patches the tests themselves, which
nothing inside the same process can stop; what it stops is writing to the channel. Lines
written through the plugin's writer must still keep to the tests it collected before any
learner code ran (tutor.run.trust), or the run is not trusted.

A sealed line is the HMAC-SHA256 of the JSON under the key (64 hex digits), a space, the JSON.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Callable

KEY_BYTES = 32
_DIGEST_CHARS = 64


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def key_pipe(key: bytes) -> int:
    """A pipe holding `key`, to hand to a child; returns its read end (the write end is closed)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, key)  # far below a pipe's capacity: never blocks
    finally:
        os.close(write_end)
    return read_end


def read_key(fd: int) -> bytes:
    """The key waiting in the pipe `fd` (tutor side: `key_pipe`); `fd` is closed after."""
    try:
        key = b""
        while len(key) < KEY_BYTES:
            chunk = os.read(fd, KEY_BYTES - len(key))
            if not chunk:
                break
            key += chunk
        return key
    finally:
        os.close(fd)


def seal(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).hexdigest().encode() + b" " + payload


def unseal(key: bytes, line: bytes) -> bytes | None:
    """The JSON of a line sealed with `key`; None for any other line."""
    digest, _, payload = line.partition(b" ")
    if len(digest) != _DIGEST_CHARS:
        return None
    expected = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
    return payload if hmac.compare_digest(digest, expected) else None


class SealedLines:
    """Splits a stream into lines and hands on the JSON of each line sealed with `key`."""

    def __init__(self, key: bytes, on_line: Callable[[bytes], None]) -> None:
        self.key, self.on_line = key, on_line
        self.partial = b""
        self.accepted = 0  # lines whose seal matched
        self.dropped = 0  # lines that were not the plugin's

    def feed(self, chunk: bytes) -> None:
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        for line in lines:
            payload = unseal(self.key, line)
            if payload is None:
                self.dropped += 1
                continue
            self.accepted += 1
            self.on_line(payload)
