"""The Textual app: built from plain core objects, so tests can hand it a fake runner.

    app = TutorApp(catalogue, store, runner_factory=lambda catalogue, force_cpu: FakeRunner())

`run_app` is what the command line calls for `tutor` with no arguments. Nothing here imports
torch or triton: the runner starts a child process for every run, and the GPU's name is asked
of another child, so the app is interactive well within a second.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from textual.app import App
from textual.screen import Screen

from tutor.bench import BenchReport, bench_drill
from tutor.catalogue import Catalogue, CatalogueError, load_catalogue
from tutor.coach import Coach
from tutor.paths import CoursePaths
from tutor.progress import ProgressStore
from tutor.results import RunResult
from tutor.runner import Runner
from tutor.ui.environment import gpu_name
from tutor.ui.screens.drill_screen import DrillScreen


class DrillRunner(Protocol):
    """What the app needs of a runner (tutor.runner.Runner, or a fake in tests)."""

    def run(
        self,
        drill_id: str,
        impl: str = "mine",
        *,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> RunResult: ...


RunnerFactory = Callable[[Catalogue, bool], DrillRunner]
# tutor.bench.bench_drill(catalogue, drill_id, impl, *, runner, force_cpu, on_progress, cancel)
BenchFunction = Callable[..., BenchReport]


def real_runner(catalogue: Catalogue, force_cpu: bool) -> DrillRunner:
    return Runner(catalogue, force_cpu=force_cpu)


class TutorApp(App[int]):
    """Holds the core objects; the drill screen does the rest."""

    CSS_PATH = "tutor.tcss"
    TITLE = "kernel drills"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self,
        catalogue: Catalogue,
        store: ProgressStore,
        runner_factory: RunnerFactory = real_runner,
        *,
        force_cpu: bool = False,
        watch: bool = True,
        watch_debounce_ms: int = 1000,
        watch_step_ms: int = 150,
        gpu_probe: Callable[[], str | None] = gpu_name,
        bench: BenchFunction = bench_drill,
    ) -> None:
        """
        Args:
            runner_factory: makes the runner from the catalogue and force_cpu.
            force_cpu: run kernels on the CPU interpreter even when there is a GPU.
            watch: start with watch on (saving a learner file re-runs its drill).
            watch_debounce_ms, watch_step_ms: how file changes are grouped (watchfiles.awatch).
            gpu_probe: returns the GPU's name or None; called once, in a worker.
            bench: checks then times a drill on the GPU (tutor.bench.bench_drill).
        """
        super().__init__()
        self.catalogue = catalogue
        self.store = store
        self.coach = Coach(catalogue, store)
        self.runner = runner_factory(catalogue, force_cpu)
        self.force_cpu = force_cpu
        self.start_watching = watch
        self.watch_debounce_ms = watch_debounce_ms
        self.watch_step_ms = watch_step_ms
        self.gpu_probe = gpu_probe
        self.bench = bench

    def get_default_screen(self) -> Screen:
        return DrillScreen()


def run_app(paths: CoursePaths, *, force_cpu: bool = False) -> int:
    """Open the app on the course at `paths`; returns the exit status for the command line."""
    try:
        catalogue = load_catalogue(paths)
    except CatalogueError as exc:
        print(f"tutor: {exc}", file=sys.stderr)
        return 2
    app = TutorApp(catalogue, ProgressStore(paths.progress_file), force_cpu=force_cpu)
    app.run()
    return app.return_code or 0
