"""A run as the app sees it while it streams: one row per test, filled in event by event.

Pure data (no Textual). The runner's events fill the rows as they arrive; when the run ends its
RunResult replaces them, so a runner that streams nothing still shows every test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tutor import results as r
from tutor.results import RunResult, TestResult

RUNNING = "running"
_CUT_SHORT = (r.TIMEOUT, r.CRASHED, r.CANCELLED)


@dataclass
class TestRow:
    id: str
    outcome: str  # running, passed, failed, skipped
    diagnosis: str | None = None
    message: str = ""
    details: str = ""
    line: int | None = None

    @property
    def name(self) -> str:
        return self.id.split("::")[-1]


@dataclass
class LiveRun:
    drill: str
    token: int
    rows: dict[str, TestRow] = field(default_factory=dict)
    backend: str = ""
    device_name: str = ""
    result: RunResult | None = None

    @property
    def finished(self) -> bool:
        return self.result is not None

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "session_start":
            self.backend = event.get("backend") or ""
            self.device_name = event.get("device_name") or ""
        elif kind == "test_start" and event.get("id"):
            self.rows[event["id"]] = TestRow(event["id"], RUNNING)
        elif kind == "test" and event.get("id"):
            self.rows[event["id"]] = TestRow(
                event["id"], event.get("outcome") or "failed", event.get("diagnosis"),
                event.get("message") or "", event.get("details") or "", event.get("line"))

    def finish(self, result: RunResult) -> None:
        self.result = result
        self.backend = result.backend or self.backend
        self.device_name = result.device_name or self.device_name
        # The result's tests are authoritative; a test still running was cut short by the end
        # of the run (a hang killed at the time limit, a crash, a newer run), so say which.
        cut_short = [row for row in self.rows.values() if row.outcome == RUNNING]
        self.rows = {t.id: _row(t) for t in result.tests}
        for row in cut_short:
            if row.id not in self.rows:
                row.outcome = result.status if result.status in _CUT_SHORT else "failed"
                self.rows[row.id] = row

    @classmethod
    def from_result(cls, result: RunResult, token: int = 0) -> LiveRun:
        live = cls(result.drill, token)
        live.finish(result)
        return live

    def first_failure(self) -> TestRow | None:
        return next((r for r in self.rows.values() if r.outcome == "failed"), None)


def _row(test: TestResult) -> TestRow:
    return TestRow(test.id, test.outcome, test.diagnosis, test.message, test.details, test.line)
