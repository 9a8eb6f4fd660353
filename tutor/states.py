"""The tutor's status words, as small str enums in one torch-free module, with one labeller.

Each member equals its value as a plain string (`RunStatus.PASSED == "passed"`), so the words
in the progress file, the event stream and the JSON output stay as they were.
"""

from __future__ import annotations

from enum import Enum

from tutor.lang.i18n import N_, _


class _Word(str, Enum):
    def __str__(self) -> str:
        return self.value


class RunStatus(_Word):
    """How a run of a drill's tests ended, before looking at single tests."""

    PASSED = "passed"  # every test passed
    FAILED = "failed"  # some tests failed; see their diagnoses
    TIMEOUT = "timeout"  # killed at the time limit (a kernel that never ends)
    OUT_OF_MEMORY = "out-of-memory"  # killed past the memory limit
    CRASHED = "crashed"  # the child died by a signal (segfault, abort) or without reporting
    COLLECTION_ERROR = "collection-error"  # the test file itself could not be collected
    SETUP_ERROR = "setup-error"  # no drill test file, pytest missing, a bad option
    CANCELLED = "cancelled"  # a newer run replaced it
    UNTRUSTED = "untrusted"  # its events were not its tests' own (tutor.run.trust): not recorded


class Outcome(_Word):
    """One test's outcome; RUNNING while it streams in."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    RUNNING = "running"


class DrillStatus(_Word):
    """A drill in the learner's progress."""

    NOT_STARTED = "not-started"
    FAILING = "failing"
    PASSED = "passed"


class BenchStatus(_Word):
    """How a bench ended (tutor.bench's report, and the bench child's JSON)."""

    TIMED = "timed"  # at least one case of the learner's file was timed
    TESTS_FAIL = "tests-fail"  # the tests did not pass: nothing was timed
    NO_GPU = "no-gpu"  # the CPU interpreter: nothing was timed
    NO_CASES = "no-cases"  # drills.yaml lists no bench shape for the drill
    ERROR = "error"  # the bench process failed; rows measured before that are kept
    RUNNING = "running"  # the child's report while it is still timing


class BackendName(_Word):
    """Where kernels ran (the session_start event's `backend`)."""

    CPU = "cpu-interpreter"
    CUDA = "cuda"


# What each kernel language runs on the CPU, as a run names it (its session's `device_name`,
# tutor.kernels: Backend.device_name), and how a sentence says it.
TRITON_INTERPRETER = "CPU (Triton interpreter)"
CUDA_ON_CPU = "CPU (CUDA C++ built for the CPU)"
_CPU_LABELS = {
    TRITON_INTERPRETER: N_("the CPU (Triton interpreter)"),
    CUDA_ON_CPU: N_("the CPU (CUDA C++ built by the C++ compiler)"),
}


class WrongPattern(_Word):
    """The shape of what a failed comparison got wrong (a failure's facts["pattern"]): the
    hint ladders pick their stages by it. tutor.harness.errormap decides which fits."""

    END = "end"  # only the end: a flat suffix, or the last columns of the rows
    NAN_ROWS = "nan"  # NaN or inf make up most of what is wrong
    FACTOR = "factor"  # each wrong row is off by one factor
    ROWS = "rows"  # whole rows wrong, the other rows right


_LABELS = {
    RunStatus.PASSED: "passed",
    RunStatus.FAILED: "failed",
    RunStatus.TIMEOUT: "timed out",
    RunStatus.OUT_OF_MEMORY: "stopped: out of memory",
    RunStatus.CRASHED: "crashed",
    RunStatus.COLLECTION_ERROR: "the tests could not be collected",
    RunStatus.SETUP_ERROR: "could not run",
    RunStatus.CANCELLED: "stopped",
    RunStatus.UNTRUSTED: "could not be trusted",
    Outcome.SKIPPED: "skipped",
    Outcome.RUNNING: "running",
    DrillStatus.NOT_STARTED: "not started",
    DrillStatus.FAILING: "failing",
    BackendName.CPU: "the CPU (Triton interpreter)",
}


def label(word: str, device_name: str = "") -> str:
    """How a status word reads in a sentence; a CUDA backend reads as its device's name."""
    if word == BackendName.CUDA:
        return device_name or _("the GPU")
    if word == BackendName.CPU and device_name in _CPU_LABELS:
        return _(_CPU_LABELS[device_name])
    for member, text in _LABELS.items():
        if member == word:
            return _(text)  # tutor/locale has each of _LABELS (tests/test_messages.py)
    return str(word)
