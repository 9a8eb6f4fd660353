"""One check of a drill (tutor.coach.check), as `tutor check` and the app both make it, and the one
record of a test's result: its event and its JSON."""

from __future__ import annotations

import json

import pytest

from tutor.coach import check
from tutor.coach.run_hints import Coach
from tutor.course import progress as p
from tutor.course.catalogue import load_catalogue
from tutor.run.events import (
    CollectFailed,
    SessionEnded,
    SessionStarted,
    TestFinished,
    TestStarted,
    decode,
)
from tutor.run.results import RunResult, TestResult
from tutor.states import DrillStatus, Outcome, RunStatus

# DESIGN.md's contract for `tutor check --json`: these keys, in this order.
CHECK_KEYS = [
    "drill",
    "passed",
    "backend",
    "device_name",
    "status",
    "impl",
    "tests",
    "diagnoses",
    "hint",
    "message",
    "duration",
    "runner",
    "never_ran",
]
TEST_KEYS = ["id", "outcome", "diagnosis", "message", "details", "line"]
COMPARISON_KEYS = [*TEST_KEYS, "where", "error_map"]

WRONG_VALUES = TestResult(
    "drills/tests/test_t3_layernorm.py::test_layer_norm[4x100]",
    Outcome.FAILED,
    "padding-where",
    "rstd: 3 of 4 values differ",
    "Your rstd matches the padded variance.",
    12,
    0.25,
    where="3 of 4 values are wrong (75.0%): indices 1-3.",
    error_map=["indices 0-3", ".XXX"],
    facts={"wrong": 3, "total": 4, "pattern": "end"},
)


class FakeRunner:
    """Returns `result`, or raises `error`, and remembers what it was asked."""

    def __init__(self, result: RunResult | None = None, error: Exception | None = None):
        self.result, self.error, self.asked = result, error, []

    def run(self, drill_id, impl="mine", *, on_event=None, cancel=None):
        self.asked.append((drill_id, impl))
        if self.error is not None:
            raise self.error
        return self.result


def _coach(course) -> Coach:
    return Coach(load_catalogue(course), p.ProgressStore(course.progress_file))


def _failed_run() -> RunResult:
    passed = TestResult("drills/tests/test_t3_layernorm.py::test_rms_norm[3x5]", Outcome.PASSED)
    return RunResult(
        "t3", "/course/drills/mine/t3_layernorm.py", RunStatus.FAILED,
        backend="cpu-interpreter", tests=[WRONG_VALUES, passed], diagnoses=["padding-where"],
    )  # fmt: skip


@pytest.mark.parametrize(
    "event",
    [
        SessionStarted("cuda", "NVIDIA H200", "2.11.0", "3.6.0"),
        TestStarted(WRONG_VALUES.id),
        TestFinished(WRONG_VALUES),
        CollectFailed("drills/tests/test_t3_layernorm.py", "SyntaxError: invalid syntax"),
        SessionEnded(1),
    ],
    ids=lambda event: type(event).__name__,
)
def test_every_event_survives_the_stream(event):
    assert decode(json.dumps(event.to_event())) == event


def test_an_event_of_the_wrong_shape_reads_as_defaults_never_an_error():
    read = TestResult.from_event(
        {"id": "f::t", "outcome": "exploded", "line": "12", "error_map": None,
         "facts": {"wrong": 3, "flag": True, "odd": [1]}, "message": None}
    )  # fmt: skip
    assert read.outcome == Outcome.FAILED and read.line is None and read.error_map == []
    assert read.facts == {"wrong": 3} and read.message == "" and read.diagnosis is None


def test_check_json_keeps_the_contracts_keys(course):
    checked = check.record(_coach(course), check.CheckedRun(_failed_run()))
    data = json.loads(json.dumps(checked.to_json()))
    assert list(data) == CHECK_KEYS
    wrong, passed = data["tests"]
    assert list(wrong) == COMPARISON_KEYS and list(passed) == TEST_KEYS  # where: failures only
    assert wrong["where"] == WRONG_VALUES.where and wrong["error_map"] == WRONG_VALUES.error_map
    assert data["status"] == "failed" and data["passed"] is False and data["runner"] == "cold"
    assert data["hint"]["diagnosis"] == "padding-where" and len(data["hint"]["stages"]) == 1


def test_only_a_run_of_the_learners_file_is_recorded(course):
    coach = _coach(course)
    other = check.record(coach, check.CheckedRun(_failed_run(), impl="solutions"))
    assert not other.recorded and other.hint.diagnosis == "padding-where"  # shown, not kept
    assert coach.store.drill("t3").runs == 0
    mine = check.record(coach, check.CheckedRun(_failed_run()))
    assert mine.recorded and coach.store.drill("t3").runs == 1
    assert coach.store.drill("t3").status == DrillStatus.FAILING


def test_a_runner_that_fails_is_a_set_up_error_and_not_recorded(course):
    coach = _coach(course)
    checked = check.check(FakeRunner(error=RuntimeError("no pytest")), coach, "t3")
    assert checked.result.status == RunStatus.SETUP_ERROR
    assert checked.result.message == "the tutor could not run the tests: no pytest"
    assert not checked.recorded and coach.store.drill("t3").runs == 0


@pytest.mark.parametrize("status", [RunStatus.TIMEOUT, RunStatus.CRASHED])
def test_a_run_cut_short_names_the_tests_it_never_reached(course, status):
    ran = TestResult("f.py::test_a", Outcome.PASSED)
    runner = FakeRunner(RunResult("t3", "mine.py", status, tests=[ran]))
    asked = []
    lister = lambda drill_id, impl: asked.append((drill_id, impl)) or [  # noqa: E731
        "f.py::test_a", "f.py::test_b[1]", "f.py::test_c",
    ]  # fmt: skip
    checked = check.run_tests(runner, "t3", "solutions", list_tests=lister)
    assert asked == [("t3", "solutions")] == runner.asked
    assert checked.never_ran == ["test_b[1]", "test_c"]
    assert checked.to_json()["never_ran"] == ["test_b[1]", "test_c"]


def test_a_run_that_ended_is_not_listed_and_a_failing_lister_loses_nothing():
    def lister(drill_id, impl):
        raise OSError("no room for the child")

    failed = check.run_tests(FakeRunner(_failed_run()), "t3", list_tests=lister)
    assert failed.all_tests is None and failed.never_ran == []  # not asked: all tests ran
    hung = RunResult("t3", "mine.py", RunStatus.TIMEOUT, diagnoses=["kernel-hang"])
    cut = check.run_tests(FakeRunner(hung), "t3", list_tests=lister)
    assert cut.result is hung and cut.never_ran == []
