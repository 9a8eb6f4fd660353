"""A grid-too-small claim must hold on every test of the run that leaves an end unwritten."""

from __future__ import annotations

from tutor.course import diagnoses as dx
from tutor.run.agreement import END_UNWRITTEN, GRID_STOPS, NO_GRID_STOPS, withdraw_unborne_claims
from tutor.run.results import TestResult
from tutor.states import Outcome


def failed(name: str, diagnosis: str, end_unwritten: str | None = GRID_STOPS) -> TestResult:
    facts = {END_UNWRITTEN: end_unwritten} if end_unwritten else {}
    return TestResult(f"t.py::{name}", Outcome.FAILED, diagnosis, "message", "details", facts=facts)


def test_a_stop_no_grid_explains_withdraws_the_grid_claims_of_the_run():
    tests = [
        failed("test_rows_8", dx.MISMATCH, NO_GRID_STOPS),
        failed("test_rows_4", dx.GRID_TOO_SMALL),
        failed("test_one_row", dx.OUTPUT_UNTOUCHED, None),
    ]
    withdraw_unborne_claims(tests)
    assert [t.diagnosis for t in tests] == [dx.MISMATCH] * 3
    assert "test_rows_8" in tests[1].details and "loop's bound" in tests[1].details
    assert "test_rows_8" in tests[2].details and "too small" in tests[2].details
    assert tests[0].details == "details"  # the test that bears witness keeps its own words


def test_a_grid_claim_every_end_bears_out_stands():
    tests = [
        failed("test_rows_8", dx.GRID_TOO_SMALL),
        failed("test_rows_4", dx.GRID_TOO_SMALL),
        failed("test_one_row", dx.OUTPUT_UNTOUCHED, end_unwritten=None),
        failed("test_nan", dx.NAN_OR_INF, end_unwritten=None),
    ]
    withdraw_unborne_claims(tests)
    assert [t.diagnosis for t in tests] == [
        dx.GRID_TOO_SMALL,
        dx.GRID_TOO_SMALL,
        dx.OUTPUT_UNTOUCHED,
        dx.NAN_OR_INF,
    ]


def test_a_named_mistake_is_no_evidence_against_the_grid():
    """A drill's own claim on an end a launch can stop at (m1's pid-split on a grouped grid)
    says nothing about whether the grid is too small."""
    tests = [failed("test_grouped", "pid-split"), failed("test_rows_4", dx.GRID_TOO_SMALL)]
    withdraw_unborne_claims(tests)
    assert [t.diagnosis for t in tests] == ["pid-split", dx.GRID_TOO_SMALL]


def test_only_failed_tests_with_an_unwritten_end_count():
    passed = TestResult("t.py::test_ok", Outcome.PASSED, facts={END_UNWRITTEN: NO_GRID_STOPS})
    other = failed("test_wrong", dx.MISMATCH, end_unwritten=None)
    claim = failed("test_rows_4", dx.GRID_TOO_SMALL)
    withdraw_unborne_claims([passed, other, claim])
    assert claim.diagnosis == dx.GRID_TOO_SMALL
