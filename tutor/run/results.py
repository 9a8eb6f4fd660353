"""Plain records of a drill run, shared by the runner, the CLI, progress and the app.

A test's result is written in one place for each of its two forms: `TestResult.to_event` and
`from_event` for the event stream (tutor.run.pytest_events writes it, tutor.run.events reads it),
and `to_json` for `tutor check --json` (DESIGN.md's contract).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tutor.states import Outcome, RunStatus

# The fact that carries a paragraph a run says once, however many of its tests it explains: why
# a verdict depends on the backend (the CPU interpreter's bf16), said by the test that found it.
BACKEND_NOTE = "backend_note"
# The fact a bf16-no-upcast failure carries when every wrong value is one 16-bit step off: a
# partial fix, not the interpreter's garbage (tutor.coach.report says so).
ONE_STEP = "one_step"


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class, despite the name

    id: str  # pytest node id
    outcome: str  # an Outcome
    diagnosis: str | None = None
    message: str = ""
    details: str = ""
    line: int | None = None  # a line of the learner's file, where known
    duration: float = 0.0
    where: str = ""  # for a failed value comparison: where the output is wrong, one sentence
    error_map: list[str] = field(default_factory=list)  # ... and its picture, line by line
    # ... and its numbers, for the hint texts: wrong, total, rows, first, pattern, ...
    # (tutor.harness.errormap.ErrorMap.facts; tutor.course.hints.PLACEHOLDERS reads them)
    facts: dict[str, int | float | str] = field(default_factory=dict)

    @property
    def backend_note(self) -> str:
        """The paragraph on why this verdict depends on the backend, "" when there is none."""
        return str(self.facts.get(BACKEND_NOTE) or "")

    @property
    def name(self) -> str:
        """The test's name without the file: `test_layer_norm[bf16-3x100]`."""
        return self.id.split("::")[-1]

    @property
    def failed(self) -> bool:
        return self.outcome == Outcome.FAILED

    def to_event(self) -> dict[str, Any]:
        """The test's line of the event stream, as a JSON-ready dict."""
        return {
            "event": "test",
            "id": self.id,
            "outcome": self.outcome,
            "diagnosis": self.diagnosis,
            "message": self.message,
            "details": self.details,
            "line": self.line,
            "duration": self.duration,
            "where": self.where,
            "error_map": self.error_map,
            "facts": self.facts,
        }

    @classmethod
    def from_event(cls, raw: dict[str, Any]) -> TestResult:
        """A test event read back; a field of the wrong kind reads as its default, and an
        outcome that is none of the known words as failed."""
        text = lambda key: str(raw.get(key) or "")  # noqa: E731
        line = raw.get("line")
        outcome = raw.get("outcome")
        return cls(
            id=text("id"),
            outcome=Outcome(outcome) if outcome in set(Outcome) else Outcome.FAILED,
            diagnosis=raw.get("diagnosis") or None,
            message=text("message"),
            details=text("details"),
            line=line if isinstance(line, int) else None,
            duration=float(raw.get("duration") or 0.0),
            where=text("where"),
            error_map=[str(x) for x in raw.get("error_map") or []],
            facts=plain_facts(raw.get("facts")),
        )

    def to_json(self) -> dict[str, Any]:
        """The test as `tutor check --json` shows it: `where` and `error_map` only for a failed
        value comparison."""
        return {
            "id": self.id,
            "outcome": self.outcome,
            "diagnosis": self.diagnosis,
            "message": self.message,
            "details": self.details,
            "line": self.line,
            **({"where": self.where, "error_map": self.error_map} if self.where else {}),
        }


def plain_facts(raw: Any) -> dict[str, int | float | str]:
    """A test's facts as JSON carries them (numbers and strings by name); the rest dropped."""
    if not isinstance(raw, dict):
        return {}
    return {
        str(k): v
        for k, v in raw.items()
        if isinstance(v, int | float | str) and not isinstance(v, bool)
    }


@dataclass
class RunResult:
    drill: str
    impl: str  # the file that was tested
    status: str  # a RunStatus
    backend: str = ""
    device_name: str = ""
    tests: list[TestResult] = field(default_factory=list)
    diagnoses: list[str] = field(default_factory=list)  # unique, most specific first
    message: str = ""  # why the run ended as it did, for statuses other than passed/failed
    output: str = ""  # the tail of pytest's own output, for when the summary is not enough
    duration: float = 0.0
    warm: bool = False  # forked from the warm process (torch and triton already imported)

    @property
    def passed(self) -> bool:
        return self.status == RunStatus.PASSED

    def first_failure(self) -> TestResult | None:
        return next((t for t in self.tests if t.failed), None)
