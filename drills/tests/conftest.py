"""Shared set-up for every drill's tests: options, backend and the learner's module.

    pytest drills/tests/test_t3_layernorm.py --impl mine|solutions|PATH [--cpu]

The backend is chosen in `pytest_configure`, before any test module (or learner file) imports
triton, so the CPU interpreter can be switched on in time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.catalogue import load_catalogue
from tutor.harness import backend as backend_mod
from tutor.harness import learner
from tutor.paths import CoursePaths

ROOT = Path(__file__).resolve().parents[2]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tutor drills")
    group.addoption(
        "--impl",
        default="mine",
        help="the file under test: mine, solutions, or a path (default: mine)",
    )
    group.addoption(
        "--cpu", action="store_true", help="run kernels on the CPU through Triton's interpreter"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_BACKEND] = backend_mod.select(force_cpu=config.getoption("--cpu"))


def pytest_report_header(config: pytest.Config) -> str:
    chosen = config.stash[_BACKEND]
    return (
        f"tutor backend: {chosen.name} ({chosen.device_name}); impl: {config.getoption('--impl')}"
    )


_BACKEND = pytest.StashKey[backend_mod.Backend]()


@pytest.fixture(scope="session")
def backend(pytestconfig: pytest.Config) -> backend_mod.Backend:
    """Where kernels run: `backend.device` is the torch device to allocate on."""
    return pytestconfig.stash[_BACKEND]


@pytest.fixture(scope="session")
def device(backend: backend_mod.Backend) -> str:
    return backend.device


@pytest.fixture(scope="module")
def impl(request: pytest.FixtureRequest) -> learner.Learner:
    """The learner's module for the drill named by the test module's DRILL."""
    catalogue = load_catalogue(CoursePaths(ROOT))
    drill = catalogue.drill(request.module.DRILL)
    path = catalogue.paths.resolve_impl(drill.file, request.config.getoption("--impl"))
    return learner.load(path, drill.functions)
