"""A full disk for the tests where it must be real (on the `small_disk` fixture of conftest.py:
a tmpfs, mounted where the tests run as root)."""

from __future__ import annotations

from pathlib import Path


def fill(disk: Path) -> None:
    """Write until the disk refuses one more byte."""
    # Unbuffered: a buffered file that met the full disk would try its last bytes again when
    # closed and raise there, outside the try (whether it does depends on where the disk ran out).
    with open(disk / "filler", "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
        except OSError:
            pass
    with open(disk / "filler-small", "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0")
        except OSError:
            pass
