"""A run as the app sees it while it streams: the runner's events folded one by one.

Pure data (no Textual). The fold is the runner's own (tutor.run.events.Fold), so the live view and
the finished result cannot disagree; when the run ends its RunResult replaces the fold's, so a
runner that streams nothing still shows every test, and a test cut short says how.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tutor.run.events import Event, Fold
from tutor.run.results import RunResult, TestResult
from tutor.states import Outcome, RunStatus

RUNNING = Outcome.RUNNING
NOT_RUN = "not-run"  # a test the run never reached (it was cut short)
_CUT_SHORT = (RunStatus.TIMEOUT, RunStatus.OUT_OF_MEMORY, RunStatus.CRASHED, RunStatus.CANCELLED)


@dataclass
class LiveRun:
    drill: str
    token: int
    fold: Fold = field(init=False)
    result: RunResult | None = None
    all_tests: list[str] | None = None
    """Every test id of the drill, when known: a run cut short shows the ones it never ran."""

    def __post_init__(self) -> None:
        self.fold = Fold(RunResult(self.drill, "mine", RunStatus.FAILED))

    @property
    def finished(self) -> bool:
        return self.result is not None

    @property
    def backend(self) -> str:
        return (self.result.backend if self.result else "") or self.fold.result.backend

    @property
    def device_name(self) -> str:
        return (self.result.device_name if self.result else "") or self.fold.result.device_name

    @property
    def rows(self) -> dict[str, TestResult]:
        """One row per test, in order; a test still running has outcome RUNNING."""
        return {row.id: row for row in self._rows()}

    def _rows(self) -> list[TestResult]:
        if self.result is None:
            return self.fold.rows()
        rows = list(self.result.tests)
        # A test running when the run ended was cut short (a hang killed at the time limit, a
        # crash, a newer run): say which, rather than drop it.
        running = self.fold.running
        if running is not None and all(t.id != running for t in rows):
            cut = self.result.status if self.result.status in _CUT_SHORT else Outcome.FAILED
            rows.append(TestResult(running, cut))
        seen = {row.id for row in rows}
        rows.extend(TestResult(i, NOT_RUN) for i in self.all_tests or [] if i not in seen)
        return rows

    @property
    def never_ran(self) -> list[str]:
        """The names of the tests this finished run never reached."""
        return [row.name for row in self._rows() if row.outcome == NOT_RUN]

    def feed(self, event: Event) -> None:
        self.fold.apply(event)

    def finish(self, result: RunResult, all_tests: list[str] | None = None) -> None:
        self.result = result
        self.all_tests = all_tests

    @classmethod
    def from_result(cls, result: RunResult, token: int = 0) -> LiveRun:
        live = cls(result.drill, token)
        live.finish(result)
        return live

    def first_failure(self) -> TestResult | None:
        return next((row for row in self._rows() if row.outcome == Outcome.FAILED), None)
