"""Fixtures for the app's tests: a small course, a scripted runner, the app built on both."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from tui_fakes import FakeRunner
from tui_helpers import Recorder

from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.course.progress import ProgressStore
from tutor.ui.app import TutorApp

FIXTURE_COURSE = Path(__file__).resolve().parent / "fixtures" / "course"


@pytest.fixture(autouse=True)
def patient_pilot(monkeypatch) -> None:
    """Every `pilot.pause()` first waits for the screen's widgets to process what is queued, and
    gives up after 30 s. That bound is Textual's guess; on a CI machine stalled by another
    worker's heavy test it was once reached by a test that takes 2 s alone. A hang still fails,
    after 120 s."""
    monkeypatch.setattr(
        Pilot, "_wait_for_screen", functools.partialmethod(Pilot._wait_for_screen, timeout=120.0)
    )


@pytest.fixture
def anyio_backend() -> str:
    """Pilot tests are `pytest.mark.anyio` coroutines; Textual runs on asyncio."""
    return "asyncio"


@pytest.fixture
def small_course(tmp_path: Path) -> CoursePaths:
    """A writable copy of the fixture course: tracks A and B, drills a1, a2, b1 (b2 coming)."""
    shutil.copytree(FIXTURE_COURSE, tmp_path / "course")
    return CoursePaths(tmp_path / "course")


@pytest.fixture
def runner() -> FakeRunner:
    fake = FakeRunner()
    yield fake
    fake.release.set()  # never leave a held run's thread waiting


@pytest.fixture
def make_app(small_course: CoursePaths, runner: FakeRunner) -> Callable[..., TutorApp]:
    """Build the app on the fixture course and the fake runner; keywords override defaults."""

    def make(runner=runner, **overrides) -> TutorApp:
        """`runner`: another runner than the scripted one (an object with `run`)."""
        options = dict(force_cpu=True, watch=False, gpu_probe=lambda: None)
        options.update(overrides)
        return TutorApp(
            load_catalogue(small_course),
            ProgressStore(small_course.progress_file),
            lambda catalogue, force_cpu: runner,
            **options,
        )

    return make


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
