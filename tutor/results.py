"""Plain records of a drill run, shared by the runner, the CLI, progress and the app."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Run statuses: how the child process ended, before looking at single tests.
PASSED = "passed"  # every test passed
FAILED = "failed"  # some tests failed; see their diagnoses
TIMEOUT = "timeout"  # the run was killed at the time limit (a kernel that never ends)
CRASHED = "crashed"  # the child died by a signal (segfault, abort) or without reporting
COLLECTION_ERROR = "collection-error"  # the test file itself could not be collected
SETUP_ERROR = "setup-error"  # no drill test file, pytest missing, a bad option
CANCELLED = "cancelled"  # a newer run replaced it


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class, despite the name

    id: str  # pytest node id
    outcome: str  # passed, failed, skipped
    diagnosis: str | None = None
    message: str = ""
    details: str = ""
    line: int | None = None  # a line of the learner's file, where known
    duration: float = 0.0

    @property
    def name(self) -> str:
        """The test's name without the file: `test_layer_norm[bf16-3x100]`."""
        return self.id.split("::")[-1]


@dataclass
class RunResult:
    drill: str
    impl: str  # the file that was tested
    status: str
    backend: str = ""
    device_name: str = ""
    tests: list[TestResult] = field(default_factory=list)
    diagnoses: list[str] = field(default_factory=list)  # unique, most specific first
    message: str = ""  # why the run ended as it did, for statuses other than passed/failed
    output: str = ""  # the tail of pytest's own output, for when the summary is not enough
    duration: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["passed"] = self.passed
        return data
