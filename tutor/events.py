"""The run's event stream (tutor.pytest_events) decoded into typed records, and folded.

`decode` is the one place that reads the JSON lines; `Fold` is the one place that turns
events into a RunResult. The runner folds the whole stream; the app folds it live, event by
event, to show each test as it finishes (and which one is running).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tutor.results import RunResult, TestResult
from tutor.states import Outcome


@dataclass(frozen=True)
class SessionStarted:
    backend: str
    device_name: str
    torch: str | None = None
    triton: str | None = None


@dataclass(frozen=True)
class TestStarted:
    __test__ = False  # not a pytest test class, despite the name

    id: str


@dataclass(frozen=True)
class TestFinished:
    __test__ = False

    result: TestResult


@dataclass(frozen=True)
class CollectFailed:
    id: str
    message: str


@dataclass(frozen=True)
class SessionEnded:
    exitstatus: int


Event = SessionStarted | TestStarted | TestFinished | CollectFailed | SessionEnded


def decode(line: bytes | str) -> Event | None:
    """One JSON line of the stream as a record; None for a line that is not one."""
    try:
        raw = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    return _record(raw)


def _record(raw: dict[str, Any]) -> Event | None:
    kind = raw.get("event")
    text = lambda key: str(raw.get(key) or "")  # noqa: E731
    if kind == "session_start":
        return SessionStarted(
            text("backend"), text("device_name"), raw.get("torch"), raw.get("triton")
        )
    if kind == "test_start" and raw.get("id"):
        return TestStarted(text("id"))
    if kind == "test" and raw.get("id"):
        return TestFinished(TestResult.from_event(raw))
    if kind == "collect_error":
        return CollectFailed(text("id"), text("message"))
    if kind == "session_end":
        status = raw.get("exitstatus")
        return SessionEnded(status if isinstance(status, int) else -1)
    return None


@dataclass
class Fold:
    """Events applied one by one to a RunResult; what a finished run is built from."""

    result: RunResult
    running: str | None = None  # the id of the test started and not yet finished
    collect_errors: list[str] = field(default_factory=list)
    session_ended: bool = False

    def apply(self, event: Event) -> None:
        result = self.result
        if isinstance(event, SessionStarted):
            result.backend, result.device_name = event.backend, event.device_name
        elif isinstance(event, TestStarted):
            self.running = event.id
        elif isinstance(event, TestFinished):
            self.running = None
            result.tests = [t for t in result.tests if t.id != event.result.id]
            result.tests.append(event.result)
        elif isinstance(event, CollectFailed):
            self.collect_errors.append(event.message)
        elif isinstance(event, SessionEnded):
            self.session_ended = True

    def rows(self) -> list[TestResult]:
        """The finished tests, then the one running now (outcome RUNNING), in order."""
        rows = list(self.result.tests)
        if self.running is not None and all(t.id != self.running for t in rows):
            rows.append(TestResult(self.running, Outcome.RUNNING))
        return rows
