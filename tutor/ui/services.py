"""The drill screen's collaborators, handed to its constructor (as posting hands its screens
their services): the core objects, and the few settings the screen acts on.

Nothing here is Textual: tests build a Services from the fixture course and a fake runner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tutor.bench import BenchReport
from tutor.coach.check import DrillRunner, TestLister
from tutor.coach.run_hints import Coach
from tutor.course.catalogue import Catalogue
from tutor.course.progress import ProgressStore

# tutor.bench.bench_drill(catalogue, drill_id, impl, *, runner, force_cpu, on_progress, cancel)
BenchFunction = Callable[..., BenchReport]


@dataclass(frozen=True)
class WatchSettings:
    """How saving a learner file re-runs its drill (watchfiles.awatch's grouping)."""

    on_at_start: bool = True
    debounce_ms: int = 1000
    step_ms: int = 50  # quiet before a save counts (an editor's write and rename: a few ms)


@dataclass(frozen=True)
class Services:
    catalogue: Catalogue
    store: ProgressStore
    coach: Coach
    runner: DrillRunner
    bench: BenchFunction
    gpu_probe: Callable[[], str | None]
    """Returns the GPU's name or None; called once, in a worker."""
    force_cpu: bool = False
    watch: WatchSettings = WatchSettings()
    list_tests: TestLister | None = None
    host_name: str = ""
    """The host the kernels run on over ssh (tutor.remote); "" for this machine."""

    @property
    def time_limit(self) -> float | None:
        """Seconds before a run is killed, when the runner says (tutor.run.runner.Runner does)."""
        limit = getattr(self.runner, "timeout", None)
        return float(limit) if isinstance(limit, int | float) else None
