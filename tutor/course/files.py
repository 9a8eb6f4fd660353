"""How the tutor opens the files it keeps and the course's: the one check before a read, the one
way a write is made whole, and a new file's name claimed by one process alone.

- `read_regular`: a file is opened without waiting (a FIFO would block an open for ever), and
  read only if what was opened is a regular file no larger than the limit (a link to
  /dev/zero would read for ever); anything else is `UnfitFile`, an OSError naming the file.
- `write_atomic`: a temporary file beside the target, flushed to disk, renamed over it: a full
  disk leaves the old file as it was, never an empty one.
- `create_new`: the first free name of `name`, `name-2`, ..., created by this process and
  no other (O_EXCL), so writers at once never pick the same one.
- `open_lock`: a lock file, opened without waiting and refused unless it is a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from tutor.lang.i18n import _

STATE_LIMIT = 8 * 2**20  # a progress file is kilobytes; the language file a few bytes
COURSE_LIMIT = 16 * 2**20  # the longest lesson or hints file is tens of kilobytes


class UnfitFile(OSError):
    """Something other than a regular file of bounded size where one should be."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(errno.EINVAL, why, str(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


# Not on Windows, where the tutor only sends runs to a host over ssh (tutor.remote).
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return _("a folder, not a regular file")
    if stat.S_ISFIFO(mode):
        return _("a FIFO, not a regular file")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return _("a device, not a regular file")
    return _("not a regular file")


def _too_large(path: Path, limit: int) -> UnfitFile:
    return UnfitFile(
        path, _("larger than {size} MiB: not a file the tutor wrote").format(size=limit >> 20)
    )


def _check(fd: int, path: Path, limit: int) -> None:
    """UnfitFile unless the open file `fd` is a regular file of at most `limit` bytes."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise UnfitFile(path, _kind(st.st_mode))
    if st.st_size > limit:
        raise _too_large(path, limit)


def read_regular(path: Path, limit: int = STATE_LIMIT) -> bytes:
    """The bytes of `path`, once it is a regular file of at most `limit` bytes; else UnfitFile
    (or the OSError of the open: FileNotFoundError when there is none)."""
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    try:
        _check(fd, path, limit)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # it grew while it was read
        raise _too_large(path, limit)
    return data


def open_lock(path: Path) -> int:
    """A descriptor of the lock file `path` (made if missing) to `flock`; UnfitFile when
    something other than a regular file is there (a FIFO would block an open for writing)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _NONBLOCK | _CLOEXEC, 0o600)
    try:
        _check(fd, path, STATE_LIMIT)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, all of it or nothing: the old file stays as it was when the
    write fails (a full disk), and no temporary file is left behind."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create_new(path: Path) -> tuple[int, Path]:
    """Create the first of `path`, `path-2`, `path-3`, ... that does not exist, for this
    process alone (O_EXCL: two processes never get the same name); its descriptor and name."""
    candidate, n = path, 1
    while True:
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.open(candidate, flags, 0o600), candidate
        except FileExistsError:
            n += 1
            candidate = path.with_name(f"{path.name}-{n}")
