"""The learner's progress: one JSON file per course folder, schema-versioned, written atomically.

Layout of `.tutor/progress.json`:

    {"schema": 1,
     "drills": {"t3": {"status": "failing", "runs": 4, "passed_runs": 0,   # the last run's verdict
                       "hints": {"padding-where": 2},        # stages revealed per diagnosis
                       "active_diagnosis": "padding-where",  # the one the next hint is about
                       "last_run": {"status": ..., "diagnoses": [...], "backend": ..., "at": ...},
                       "solved_at": null, "solved_with_hints": null,  # the first pass, kept
                       "best_bench": {"label": {"us": 12.3, "gbps": 2900, ...}},
                       "perf": {"case": ..., "diagnosis": "spills", "text": ..., "numbers": {...}},
                       "perf_hints": {"spills": 1}}}}   # the perf coach, like the hints

`status` says how the file stands now (a drill that passed and fails again is "failing"; a reset
makes it "not-started"); `solved_at` says it was passed once, and stays. A file that cannot be
read is moved aside (never deleted) and the learner is told where it went.

A file whose contents cannot be understood is moved aside (never deleted, never over another
set-aside file) and the learner is told where it went; a file that cannot be read at all
(permissions, a folder in its place) is reported and left where it is. Every change goes
through `update()`, which holds a lock on .tutor/progress.lock while it reads, changes and
writes, so runs finishing at once (the app and several `tutor check`s) lose no update. None of
these writes goes through a symbolic link (`.tutor` itself, or the files in it): they are refused
(tutor.course.paths.LinkRefused, an OSError) and nothing is written.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from tutor.course.files import UnfitFile, open_lock, read_regular, write_atomic
from tutor.course.paths import refuse_links
from tutor.lang.i18n import _
from tutor.states import DrillStatus

SCHEMA = 1


@dataclass
class DrillProgress:
    status: str = DrillStatus.NOT_STARTED  # the file holds the word, a plain string
    runs: int = 0
    passed_runs: int = 0
    hints: dict[str, int] = field(default_factory=dict)
    active_diagnosis: str | None = None
    last_run: dict[str, Any] | None = None
    solved_at: str | None = None
    solved_with_hints: bool | None = None
    best_bench: dict[str, dict[str, Any]] = field(default_factory=dict)
    perf: dict[str, Any] | None = None  # the last bench's perf diagnosis of the learner's file
    perf_hints: dict[str, int] = field(default_factory=dict)  # perf stages revealed per id

    @property
    def hints_revealed(self) -> int:
        return sum(self.hints.values())

    @property
    def solved(self) -> bool:
        """Passed at least once (the file may fail now, or be back to its starter)."""
        return self.status == DrillStatus.PASSED or self.solved_at is not None

    @property
    def regressed(self) -> bool:
        """Passed before, and the last run fails."""
        return self.solved and self.status == DrillStatus.FAILING


class ProgressStore:
    """Load, change and save the progress file. `warning` says if a corrupt file was set aside."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.drills: dict[str, DrillProgress] = {}
        self.warning: str | None = None
        self._read_as: tuple[int, int, int] | None = None  # the file this store last read
        self.reload()

    def _identity(self) -> tuple[int, int, int] | None:
        """Which version of the file is on disk: every save replaces it (a new inode)."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def changed_on_disk(self) -> bool:
        """Whether the file is no longer the one this store last read or wrote (another
        process, e.g. `tutor hint` beside the app, wrote it since)."""
        return self._identity() != self._read_as

    def reload(self) -> None:
        """Read the file again (another process, e.g. the CLI beside the app, may have written)."""
        self.drills = {}
        self._read_as = self._identity()  # before reading: a write after it is seen next time
        try:
            text = read_regular(self.path).decode("utf-8")
        except FileNotFoundError:
            return
        except UnfitFile as exc:  # a folder, a FIFO, /dev/zero: reading it would never end
            raise ProgressError(
                _("{path} cannot be read ({why}): remove it").format(
                    path=self.path, why=exc.strerror
                )
            ) from exc
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ProgressError(
                _("{path} cannot be read ({why}): fix or remove it").format(
                    path=self.path, why=reason
                )
            ) from exc
        try:
            self.drills = _parse(text)
        except (ValueError, TypeError, AttributeError) as exc:
            aside = _free_name(
                self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            )
            os.replace(self._writable(self.path), aside)
            self.drills = {}
            self.warning = _(
                "{path} could not be read ({why}); it was moved to {aside} and progress "
                "starts afresh"
            ).format(path=self.path, why=exc, aside=aside)

    @contextmanager
    def update(self) -> Iterator[ProgressStore]:
        """Read, change and write the file under a lock: `with store.update(): ...`."""
        self._writable(self.path).parent.mkdir(parents=True, exist_ok=True)
        lock = open_lock(self._writable(self.path.with_name("progress.lock")))
        try:
            with _locked(lock):
                self.reload()
                yield self
                self.save()
        finally:
            os.close(lock)  # which lets the lock go

    def _writable(self, path: Path) -> Path:
        """`path`, unless a link is on the way to it from the course folder (LinkRefused)."""
        return refuse_links(path, self.path.parent.parent)

    def drill(self, drill_id: str) -> DrillProgress:
        return self.drills.setdefault(drill_id, DrillProgress())

    def save(self) -> None:
        """Write to a temporary file in the same folder, then rename it over the old one."""
        self._writable(self.path).parent.mkdir(parents=True, exist_ok=True)
        data = {"schema": SCHEMA, "drills": {k: asdict(v) for k, v in sorted(self.drills.items())}}
        try:
            write_atomic(self.path, json.dumps(data, indent=2).encode("utf-8"))
            self._read_as = self._identity()
        except OSError as exc:  # a full disk, a quota, a read-only folder
            raise OSError(
                exc.errno,
                _("progress not saved ({why}); the file keeps what it had").format(
                    why=exc.strerror or exc
                ),
                str(self.path),
            ) from exc


class ProgressError(Exception):
    """The progress file exists but cannot be read; the message says what to do."""


def _parse(text: str) -> dict[str, DrillProgress]:
    """The drills of a progress file; ValueError or TypeError for anything not of its shape."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(
            f"unknown schema {data.get('schema') if isinstance(data, dict) else data!r}"
        )
    drills = data.get("drills", {})
    if not isinstance(drills, dict):
        raise ValueError("'drills' is not a mapping")
    found = {}
    for drill_id, raw in drills.items():
        if not isinstance(raw, dict):
            raise ValueError(f"drill {drill_id!r} is not a mapping")
        state = DrillProgress(**{k: v for k, v in raw.items() if k in _FIELD_TYPES})
        for name, kinds in _FIELD_TYPES.items():
            value = getattr(state, name)
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                raise TypeError(f"drill {drill_id!r}: {name} is {type(value).__name__}")
        if not all(isinstance(k, str) and type(v) is int for k, v in state.hints.items()):
            raise TypeError(f"drill {drill_id!r}: hints must map diagnosis ids to counts")
        found[drill_id] = state
    return found


# What each field of a drill's progress may hold (None where it is optional).
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "status": (str,),
    "runs": (int,),
    "passed_runs": (int,),
    "hints": (dict,),
    "active_diagnosis": (str, type(None)),
    "last_run": (dict, type(None)),
    "solved_at": (str, type(None)),
    "solved_with_hints": (bool, type(None)),
    "best_bench": (dict,),
    "perf": (dict, type(None)),
    "perf_hints": (dict,),
}
assert set(_FIELD_TYPES) == {f.name for f in fields(DrillProgress)}


def _free_name(path: Path) -> Path:
    """`path`, or `path-2`, `path-3`, ... : the first name no file has yet."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


@contextmanager
def _locked(lock: int) -> Iterator[None]:
    """An exclusive lock on the open file descriptor `lock` for the block: flock, and on
    Windows (where the tutor runs its kernels on a host over ssh: tutor.remote) a lock on its
    first byte."""
    try:
        import fcntl
    except ImportError:
        import msvcrt  # Windows

        msvcrt.locking(lock, msvcrt.LK_LOCK, 1)  # retries for 10 s, then OSError
        try:
            yield
        finally:
            msvcrt.locking(lock, msvcrt.LK_UNLCK, 1)
        return
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
