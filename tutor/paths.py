"""Where the course lives on disk, and every path derived from a drill's file name.

The course root is the folder holding drills.yaml: `--root`, else $TUTOR_ROOT, else the first
folder above the current directory that has one, else the checkout this package sits in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CATALOGUE_NAME = "drills.yaml"


class CourseNotFound(Exception):
    """No drills.yaml could be found from the current directory or $TUTOR_ROOT."""


def find_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Return the course root (the folder that holds drills.yaml)."""
    if explicit is None:
        explicit = os.environ.get("TUTOR_ROOT") or None
    if explicit is not None:
        root = Path(explicit).expanduser().resolve()
        if not (root / CATALOGUE_NAME).is_file():
            raise CourseNotFound(f"{root} has no {CATALOGUE_NAME}")
        return root
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / CATALOGUE_NAME).is_file():
            return folder
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / CATALOGUE_NAME).is_file():
        return checkout
    raise CourseNotFound(
        f"no {CATALOGUE_NAME} in {here} or above it; run the tutor inside the course folder "
        "or set TUTOR_ROOT"
    )


@dataclass(frozen=True)
class CoursePaths:
    """Every location the tutor reads or writes, derived from the course root."""

    root: Path

    @property
    def catalogue(self) -> Path:
        return self.root / CATALOGUE_NAME

    @property
    def state_dir(self) -> Path:
        """Per-learner state that is never tracked: progress and backups."""
        return self.root / ".tutor"

    @property
    def progress_file(self) -> Path:
        return self.state_dir / "progress.json"

    @property
    def backups(self) -> Path:
        return self.state_dir / "backups"

    @property
    def triton_cache(self) -> Path:
        """Triton's compiled kernels for this course (TRITON_CACHE_DIR of every run): a kernel
        the learner did not change is loaded from here instead of compiled again."""
        return self.state_dir / "triton-cache"

    def kernel_cache_env(self) -> dict[str, str]:
        """The environment that points a run's Triton at `triton_cache`; nothing when the learner
        chose a cache of their own, or when the folder is a link (never write through one)."""
        if os.environ.get("TRITON_CACHE_DIR") or self.triton_cache.is_symlink():
            return {}
        return {"TRITON_CACHE_DIR": str(self.triton_cache)}

    @property
    def hints_dir(self) -> Path:
        return self.root / "hints"

    def starter(self, file: str) -> Path:
        return self.root / "drills" / "starters" / file

    def solution(self, file: str) -> Path:
        return self.root / "drills" / "solutions" / file

    def mine(self, file: str) -> Path:
        return self.root / "drills" / "mine" / file

    def test_file(self, file: str) -> Path:
        return self.root / "drills" / "tests" / f"test_{file}"

    def lesson(self, drill_id: str) -> Path:
        return self.root / "drills" / "content" / f"{drill_id}.md"

    def hints(self, drill_id: str) -> Path:
        return self.hints_dir / f"{drill_id}.yaml"

    def mutants(self, drill_id: str) -> Path:
        """Known-buggy kernels (`<diagnosis>__<variant>.py`) and correct variants (`correct__*`)."""
        return self.root / "drills" / "mutants" / drill_id

    def bench_recipe(self, drill_id: str) -> Path:
        """What `tutor bench` needs for the drill: inputs, bytes moved, a torch eager version."""
        return self.root / "drills" / "bench" / f"{drill_id}.py"

    def resolve_impl(self, file: str, impl: str) -> Path:
        """`mine`, `solutions` (or `solution`, `starter`) or a path to any file."""
        named = {
            "mine": self.mine,
            "solutions": self.solution,
            "solution": self.solution,
            "starter": self.starter,
            "starters": self.starter,
        }
        if impl in named:
            return named[impl](file)
        return Path(impl).expanduser().resolve()
