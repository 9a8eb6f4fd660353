"""The hint engine: stage 1 by itself on a new diagnosis, later stages one request at a time."""

from __future__ import annotations

from tutor import progress as p
from tutor.catalogue import load_catalogue
from tutor.coach import Coach
from tutor.hints import HintBook
from tutor.results import FAILED, PASSED, RunResult, TestResult


def _run(status, diagnoses=()):
    tests = [
        TestResult("t::a", "passed"),
        TestResult(
            "t::b",
            "failed" if diagnoses else "passed",
            diagnosis=diagnoses[0] if diagnoses else None,
        ),
    ]
    return RunResult("t3", "mine.py", status, tests=tests, diagnoses=list(diagnoses))


def _coach(course):
    return Coach(load_catalogue(course), p.ProgressStore(course.progress_file))


def test_first_failure_reveals_only_the_first_stage(course):
    coach = _coach(course)
    view = coach.record_run(_run(FAILED, ["padding-where", "mismatch"]))
    assert view.diagnosis == "padding-where"
    assert len(view.stages) == 1 and not view.exhausted
    book = HintBook(course.hints_dir, "t3")
    assert view.stages[0] == book.ladder("padding-where").stages[0]
    # Failing again with the same mistake does not reveal more by itself.
    assert len(coach.record_run(_run(FAILED, ["padding-where"])).stages) == 1


def test_next_stage_on_request_until_exhausted_then_solution_unlocks(course):
    coach = _coach(course)
    coach.record_run(_run(FAILED, ["padding-where"]))
    assert not coach.solution_unlocked("t3")
    total = len(HintBook(course.hints_dir, "t3").ladder("padding-where").stages)
    for shown in range(2, total + 1):
        view = coach.reveal_next("t3")
        assert len(view.stages) == shown
    assert view.exhausted and coach.reveal_next("t3").stages == view.stages
    assert coach.solution_unlocked("t3")


def test_reveals_are_remembered_across_processes(course):
    coach = _coach(course)
    coach.record_run(_run(FAILED, ["padding-where"]))
    coach.reveal_next("t3")
    assert len(_coach(course).current("t3").stages) == 2


def test_pass_records_whether_hints_were_used(course):
    coach = _coach(course)
    coach.record_run(_run(FAILED, ["unbiased-variance"]))
    assert coach.record_run(_run(PASSED)) is None
    state = p.ProgressStore(course.progress_file).drill("t3")
    assert state.status == p.PASSED and state.solved_with_hints is True and state.runs == 2
    clean = _coach(course)
    clean.store.drill("t1")
    clean.record_run(RunResult("t1", "m.py", PASSED, tests=[TestResult("x", "passed")]))
    assert p.ProgressStore(course.progress_file).drill("t1").solved_with_hints is False


def test_unknown_diagnosis_falls_back_to_the_generic_ladder(course):
    book = HintBook(course.hints_dir, "t3")
    assert book.ladder("never-heard-of-it").diagnosis == "mismatch"
