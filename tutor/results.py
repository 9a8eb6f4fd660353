"""Plain records of a drill run, shared by the runner, the CLI, progress and the app."""

from __future__ import annotations

from dataclasses import dataclass, field

from tutor.states import Outcome, RunStatus

# The run statuses by their old names, for the modules that compare with them.
PASSED = RunStatus.PASSED
FAILED = RunStatus.FAILED
TIMEOUT = RunStatus.TIMEOUT
OUT_OF_MEMORY = RunStatus.OUT_OF_MEMORY
CRASHED = RunStatus.CRASHED
COLLECTION_ERROR = RunStatus.COLLECTION_ERROR
SETUP_ERROR = RunStatus.SETUP_ERROR
CANCELLED = RunStatus.CANCELLED


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
    # (tutor.harness.errormap.ErrorMap.facts; tutor.hints.PLACEHOLDERS reads them)
    facts: dict[str, int | float | str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The test's name without the file: `test_layer_norm[bf16-3x100]`."""
        return self.id.split("::")[-1]

    @property
    def failed(self) -> bool:
        return self.outcome == Outcome.FAILED


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
