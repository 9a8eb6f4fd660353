"""The learner's working copies: made from the starters on first use, reset with a backup.

Working copies live in drills/mine/ (ignored by git), so pulling a new version of the course
never conflicts with the learner's edits, and a reset never loses them: the old file is copied
to .tutor/backups/<file>.<timestamp> first.

The tutor's own writes never follow a symbolic link: a learner file, or a folder on the way to
it, that is a link is refused with a message (a link could point anywhere, and the tutor may run
as root), and nothing is written. A starter is copied into place whole or not at all (a temporary
file renamed over the old one), so a full disk during a reset leaves the learner's file as it was.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from tutor.course.catalogue import Catalogue, Drill
from tutor.course.files import create_new
from tutor.course.paths import LinkRefused, refuse_links
from tutor.lang.i18n import _


class WorkspaceError(Exception):
    """A learner file the tutor will not write; the message names it and says why."""


def _no_starter(starter: Path, drill: Drill) -> str:
    return _("{starter} is missing: the course has no starter for {drill}").format(
        starter=starter, drill=drill.id
    )


def ensure_mine(catalogue: Catalogue, drill: Drill) -> Path:
    """The learner's file for `drill`, copied from the starter if it does not exist yet."""
    mine = catalogue.paths.mine(drill.file)
    check_writable(mine, catalogue.paths.root)
    if not mine.exists():
        starter = catalogue.paths.starter(drill.file)
        if not starter.is_file():
            raise WorkspaceError(_no_starter(starter, drill))
        _copy_whole(starter, mine)
    return mine


def backup(catalogue: Catalogue, drill: Drill) -> Path | None:
    """Copy the learner's file aside; returns the copy, or None when there was no file."""
    mine = catalogue.paths.mine(drill.file)
    check_writable(mine, catalogue.paths.root)
    if not mine.exists():
        return None
    folder = catalogue.paths.backups
    check_writable(folder, catalogue.paths.root)
    folder.mkdir(parents=True, exist_ok=True)
    # The name is claimed by creating the file (resets at once never share a backup).
    fd, target = create_new(folder / f"{drill.file}.{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        with os.fdopen(fd, "wb") as out, mine.open("rb") as data:
            shutil.copyfileobj(data, out)
        shutil.copystat(mine, target)
    except BaseException:  # a full disk: no half backup left behind, the learner's file untouched
        target.unlink(missing_ok=True)
        raise
    return target


def reset(catalogue: Catalogue, drill: Drill) -> Path | None:
    """Restore the pristine starter; returns where the learner's old file was backed up."""
    starter = catalogue.paths.starter(drill.file)
    if not starter.is_file():
        raise WorkspaceError(_no_starter(starter, drill))
    saved = backup(catalogue, drill)
    _copy_whole(starter, catalogue.paths.mine(drill.file))
    return saved


def _copy_whole(source: Path, target: Path) -> None:
    """Copy `source` to `target` through a temporary file beside it: all of it, or nothing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out, source.open("rb") as data:
            shutil.copyfileobj(data, out)
        shutil.copymode(target if target.exists() else source, tmp)  # mkstemp made it 0600
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(path: Path, root: Path) -> None:
    """Refuse `path` if it, or a folder between the course root and it, is a link or not a file.

    A directory where the file should be is refused too: writing into it would fail anyway,
    and the message says what to do.
    """
    try:
        refuse_links(path, root)
    except LinkRefused as exc:
        raise WorkspaceError(str(exc)) from None
    if path.exists() and not path.is_file() and path.suffix:
        raise WorkspaceError(
            _("{path} is a directory, where your file should be: move it away").format(path=path)
        )
