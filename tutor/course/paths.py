"""Where the course lives on disk, and every path derived from a drill's file name.

The course root is the folder holding drills.yaml: `--root`, else $TUTOR_ROOT, else the first
folder above the current directory that has one, else the checkout this package sits in.

Every path the tutor writes is checked with `refuse_links` first: a link anywhere between the
course root and the file (`.tutor` itself, `.tutor/mutants`, `drills/mine`, the file) could
point anywhere, and the tutor may run as root, so such a write is refused and nothing is written.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from tutor.lang.i18n import _

CATALOGUE_NAME = "drills.yaml"


class CourseNotFound(Exception):
    """No drills.yaml could be found from the current directory or $TUTOR_ROOT."""


class LinkRefused(OSError):
    """A write the tutor refuses: the path, or a folder between the course root and it, is a
    symbolic link. An OSError, so every writer's "could not write" path reports it in one line."""

    def __init__(self, link: Path) -> None:
        try:
            target = _(" (to {target})").format(target=link.readlink())
        except OSError:
            target = ""
        super().__init__(
            errno.ELOOP,
            _(
                "is a symbolic link{target}: the tutor does not write through links. Replace it "
                "with a regular file or folder (what it points to is left as it is)."
            ).format(target=target),
            str(link),
        )

    def __str__(self) -> str:
        return f"{self.filename} {self.strerror}"


def refuse_links(path: Path, root: Path) -> Path:
    """`path`, once neither it nor any folder between `root` and it is a symbolic link; else
    LinkRefused. A path outside `root` is checked by itself."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        candidates = [path]
    else:
        candidates = [root.joinpath(*parts[: i + 1]) for i in range(len(parts))]
    for candidate in candidates:
        if candidate.is_symlink():
            raise LinkRefused(candidate)
    return path


def find_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Return the course root (the folder that holds drills.yaml)."""
    if explicit is None:
        explicit = os.environ.get("TUTOR_ROOT") or None
    if explicit is not None:
        root = Path(explicit).expanduser().resolve()
        if not (root / CATALOGUE_NAME).is_file():
            raise CourseNotFound(_("{root} has no {name}").format(root=root, name=CATALOGUE_NAME))
        return root
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / CATALOGUE_NAME).is_file():
            return folder
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / CATALOGUE_NAME).is_file():
        return checkout
    raise CourseNotFound(
        _(
            "no {name} in {here} or above it; run the tutor inside the course folder "
            "or set TUTOR_ROOT"
        ).format(name=CATALOGUE_NAME, here=here)
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

    @property
    def cuda_cache(self) -> Path:
        """The CUDA C++ drills' builds (NVRTC's cubins, the CPU programs): an unchanged file is
        not compiled again (tutor.kernels.cuda)."""
        return self.state_dir / "cuda-cache"

    @property
    def built_mutants(self) -> Path:
        """Where `tutor dev check` writes the mutants it builds from patches."""
        return self.state_dir / "mutants"

    def writable(self, path: Path) -> Path:
        """`path`, checked with `refuse_links` against the course root."""
        return refuse_links(path, self.root)

    def kernel_cache_env(self) -> dict[str, str]:
        """The environment that points a run's compilers at the course's caches (Triton's, and
        the CUDA C++ builds': tutor.kernels.cuda); a cache is left out when the learner chose one
        of their own, when a link is on the way (never write through one), or when the course
        folder cannot be written (a read-only checkout: the compiler would fail to write)."""
        env = {}
        for name, folder in (
            ("TRITON_CACHE_DIR", self.triton_cache),
            ("TUTOR_CUDA_CACHE", self.cuda_cache),
        ):
            if os.environ.get(name):
                continue
            try:
                self.writable(folder)
            except LinkRefused:
                continue
            existing = next(p for p in (folder, *folder.parents) if p.exists())
            if os.access(existing, os.W_OK):
                env[name] = str(folder)
        return env

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
        """The drill's tests: always Python (pytest), whatever language its kernels are in."""
        return self.root / "drills" / "tests" / f"test_{Path(file).stem}.py"

    def host(self, file: str) -> Path:
        """A CUDA C++ drill's host code, which launches the learner's kernels
        (tutor.kernels.cuda)."""
        return self.root / "drills" / "host" / f"{Path(file).stem}.py"

    def lesson(self, drill_id: str) -> Path:
        return self.root / "drills" / "content" / f"{drill_id}.md"

    def hints(self, drill_id: str) -> Path:
        return self.hints_dir / f"{drill_id}.yaml"

    def mutants(self, drill_id: str) -> Path:
        """Known-buggy kernels (`<diagnosis>__<variant>.py`) and correct variants (`correct__*`)."""
        return self.root / "drills" / "mutants" / drill_id

    def stories(self, drill_id: str) -> Path:
        """The English the drill's tests can show (suspect stories): tutor.dev.stories."""
        return self.root / "drills" / "stories" / f"{drill_id}.yaml"

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
