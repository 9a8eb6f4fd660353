"""The run's event stream (tutor.run.pytest_events) as typed records, and their fold.

Each record writes its own line (`to_event`, used by the plugin in the child) and reads it back
(`from_event`); `decode` is the one place that reads the JSON lines, and `Fold` the one place
that turns events into a RunResult. The runner folds the whole stream; the app folds it live,
event by event, to show each test as it finishes (and which one is running).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tutor.run.results import RunResult, TestResult
from tutor.run.trust import Ledger
from tutor.states import Outcome


def _text(raw: dict[str, Any], key: str) -> str:
    return str(raw.get(key) or "")


@dataclass(frozen=True)
class SessionStarted:
    EVENT: ClassVar[str] = "session_start"

    backend: str
    device_name: str
    torch: str | None = None
    triton: str | None = None

    def to_event(self) -> dict[str, Any]:
        return {
            "event": self.EVENT,
            "backend": self.backend,
            "device_name": self.device_name,
            "torch": self.torch,
            "triton": self.triton,
        }

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> SessionStarted:
        return cls(
            _text(raw, "backend"), _text(raw, "device_name"), raw.get("torch"), raw.get("triton")
        )


@dataclass(frozen=True)
class Collected:
    """The ids of the tests collected, in the order they will run; sent once, before the first
    test starts (and so before the learner's file is imported: tutor.run.trust)."""

    EVENT: ClassVar[str] = "collected"

    ids: tuple[str, ...]

    def to_event(self) -> dict[str, Any]:
        return {"event": self.EVENT, "ids": list(self.ids)}

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> Collected | None:
        ids = raw.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return None
        return cls(tuple(ids))


@dataclass(frozen=True)
class TestStarted:
    __test__ = False  # not a pytest test class, despite the name
    EVENT: ClassVar[str] = "test_start"

    id: str

    def to_event(self) -> dict[str, Any]:
        return {"event": self.EVENT, "id": self.id}

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> TestStarted | None:
        return cls(_text(raw, "id")) if raw.get("id") else None


@dataclass(frozen=True)
class TestFinished:
    __test__ = False
    EVENT: ClassVar[str] = "test"

    result: TestResult

    def to_event(self) -> dict[str, Any]:
        return self.result.to_event()

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> TestFinished | None:
        return cls(TestResult.from_event(raw)) if raw.get("id") else None


@dataclass(frozen=True)
class CollectFailed:
    EVENT: ClassVar[str] = "collect_error"

    id: str
    message: str

    def to_event(self) -> dict[str, Any]:
        return {"event": self.EVENT, "id": self.id, "message": self.message}

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> CollectFailed:
        return cls(_text(raw, "id"), _text(raw, "message"))


@dataclass(frozen=True)
class SessionEnded:
    EVENT: ClassVar[str] = "session_end"

    exitstatus: int

    def to_event(self) -> dict[str, Any]:
        return {"event": self.EVENT, "exitstatus": self.exitstatus}

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> SessionEnded:
        status = raw.get("exitstatus")
        return cls(status if isinstance(status, int) else -1)


@dataclass(frozen=True)
class BatchFile:
    """Written by tutor.harness.batch before each file's session: the events up to the next
    one are that file's."""

    EVENT: ClassVar[str] = "batch_file"

    impl: str

    def to_event(self) -> dict[str, Any]:
        return {"event": self.EVENT, "impl": self.impl}

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> BatchFile | None:
        return cls(_text(raw, "impl")) if raw.get("impl") else None


Event = (
    SessionStarted
    | Collected
    | TestStarted
    | TestFinished
    | CollectFailed
    | SessionEnded
    | BatchFile
)
_BY_KIND = {
    kind.EVENT: kind
    for kind in (
        SessionStarted,
        Collected,
        TestStarted,
        TestFinished,
        CollectFailed,
        SessionEnded,
        BatchFile,
    )
}


def decode(line: bytes | str) -> Event | None:
    """One JSON line of the stream as a record; None for a line that is not one."""
    try:
        raw = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    kind = _BY_KIND.get(raw.get("event"))
    return kind.from_event(raw) if kind is not None else None


@dataclass
class Fold:
    """Events applied one by one to a RunResult; what a finished run is built from."""

    result: RunResult
    running: str | None = None  # the id of the test started and not yet finished
    collect_errors: list[str] = field(default_factory=list)
    exitstatus: int | None = None  # pytest's, once the session ended
    ledger: Ledger = field(default_factory=Ledger)  # whether the events keep to the tests

    @property
    def session_ended(self) -> bool:
        return self.exitstatus is not None

    def apply(self, event: Event) -> None:
        result = self.result
        if isinstance(event, SessionStarted):
            result.backend, result.device_name = event.backend, event.device_name
        elif isinstance(event, Collected):
            self.ledger.collected_tests(list(event.ids))
        elif isinstance(event, TestStarted):
            self.ledger.test_started(event.id)
            self.running = event.id
        elif isinstance(event, TestFinished):
            self.ledger.test_finished(event.result.id, event.result.failed)
            self.running = None
            result.tests = [t for t in result.tests if t.id != event.result.id]
            result.tests.append(event.result)
        elif isinstance(event, CollectFailed):
            self.collect_errors.append(event.message)
        elif isinstance(event, SessionEnded):
            self.ledger.session_ended(event.exitstatus)
            self.exitstatus = event.exitstatus

    def rows(self) -> list[TestResult]:
        """The finished tests, then the one running now (outcome RUNNING), in order."""
        rows = list(self.result.tests)
        if self.running is not None and all(t.id != self.running for t in rows):
            rows.append(TestResult(self.running, Outcome.RUNNING))
        return rows
