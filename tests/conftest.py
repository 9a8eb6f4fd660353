"""Fixtures for the project's own tests: the real course, and throw-away copies of it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

from tutor.course.catalogue import Catalogue, load_catalogue
from tutor.course.paths import CoursePaths

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
pytest_plugins = ["pytester"]

# One torch thread per test process, as in the tutor's own runs (tutor.run.runner.TORCH_THREADS):
# with xdist's workers on every core, more threads only wait for each other. Set before any
# test module imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (make test): one worker more than the machine has cores.

    Many of these tests wait with a core idle (an app in a real terminal, a run killed at its
    time limit, a warm process started and stopped), and the extra worker keeps both cores of
    a small machine busy meanwhile: on 2 cores, alternate runs of the whole suite took 4:26 and
    3:59 with 3 workers, 4:59 and 4:49 with 2 (2026-12-05). PYTEST_XDIST_AUTO_NUM_WORKERS still
    decides when set.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return (psutil.cpu_count(logical=False) or os.cpu_count() or 1) + 1


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    """The real course, read-only."""
    return load_catalogue(CoursePaths(ROOT))


@pytest.fixture
def course(tmp_path: Path) -> CoursePaths:
    """A writable copy of the course (catalogue, drills, hints, translations) without any
    learner state."""
    for source in (*ROOT.glob("drills*.yaml"), ROOT / "hints"):  # drills.zh.yaml: titles
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, tmp_path / source.name)
    shutil.copytree(
        ROOT / "drills", tmp_path / "drills", ignore=shutil.ignore_patterns("mine", "__pycache__")
    )
    return CoursePaths(tmp_path)


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of 16 MB mounted at tmp_path/disk, where a full disk or a read-only folder is
    real; skipped where mounting is not allowed (it needs root)."""
    where = tmp_path / "disk"
    where.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)]
    if shutil.which("mount") is None or subprocess.run(mount, capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)
