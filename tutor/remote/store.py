"""The host's side of the bundle: contents kept by their sha256, files placed from them.

    store = Store(cache / "store")
    missing = store.missing(files.entries.values())   # what the tutor must send
    store.add(sha, data)                              # checked against its sha256
    placed = store.place(root, files.entries)         # the course's folder, as the tutor has it

A content is sent once per host, whatever course or session it belongs to: a file the learner
did not change is never sent again, and one put back as it was is found in the store. Each file
is written into the course's folder only when what is there differs (checked by its hash: a run
may have changed it), through a temporary file and a rename, so a run never reads half a file.

Standard library only: the bootstrap uses it before the host has an environment of the tutor's.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath


class BadBundle(ValueError):
    """A path or a content the host will not write: the message says which."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str | None:
    try:
        return sha256(path.read_bytes())
    except OSError:
        return None


def inside(root: Path, relative: str) -> Path:
    """`root / relative` for a relative POSIX path that stays inside `root`; else BadBundle."""
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or any(p in ("..", "") for p in parts):
        raise BadBundle(f"{relative!r} is not a path inside the course")
    return root.joinpath(*parts)


class Store:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, sha: str) -> Path:
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise BadBundle(f"{sha!r} is not a sha256")
        return self.folder / sha[:2] / sha

    def has(self, sha: str) -> bool:
        return self._path(sha).is_file()

    def missing(self, shas: Iterable[str]) -> list[str]:
        return sorted({sha for sha in shas if not self.has(sha)})

    def add(self, sha: str, data: bytes) -> None:
        if sha256(data) != sha:
            raise BadBundle(f"the content sent as {sha[:12]} has another hash")
        path = self._path(sha)
        if not path.is_file():
            _write(path, data)

    def place(self, root: Path, entries: dict[str, str]) -> int:
        """Write each entry's content at its path under `root` where it differs; how many
        were written. Entries whose content is not in the store are left (`missing` says)."""
        placed = 0
        for relative, sha in sorted(entries.items()):
            target = inside(root, relative)
            if not self.has(sha) or file_sha256(target) == sha:
                continue
            _write(target, self._path(sha).read_bytes())
            placed += 1
        return placed


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    temporary.write_bytes(data)
    os.replace(temporary, path)
