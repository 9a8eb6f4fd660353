"""The learner's working copies: made from the starters on first use, reset with a backup.

Working copies live in drills/mine/ (ignored by git), so pulling a new version of the course
never conflicts with the learner's edits, and a reset never loses them: the old file is copied
to .tutor/backups/<file>.<timestamp> first.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from tutor.catalogue import Catalogue, Drill


def ensure_mine(catalogue: Catalogue, drill: Drill) -> Path:
    """The learner's file for `drill`, copied from the starter if it does not exist yet."""
    mine = catalogue.paths.mine(drill.file)
    if not mine.exists():
        mine.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(catalogue.paths.starter(drill.file), mine)
    return mine


def backup(catalogue: Catalogue, drill: Drill) -> Path | None:
    """Copy the learner's file aside; returns the copy, or None when there was no file."""
    mine = catalogue.paths.mine(drill.file)
    if not mine.exists():
        return None
    folder = catalogue.paths.backups
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = folder / f"{drill.file}.{stamp}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{drill.file}.{stamp}-{n}"
    shutil.copy2(mine, target)
    return target


def reset(catalogue: Catalogue, drill: Drill) -> Path | None:
    """Restore the pristine starter; returns where the learner's old file was backed up."""
    saved = backup(catalogue, drill)
    mine = catalogue.paths.mine(drill.file)
    mine.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(catalogue.paths.starter(drill.file), mine)
    return saved
