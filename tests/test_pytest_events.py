"""The pytest plugin streams one JSON event per test, with the diagnosis of a DrillFailure."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

TESTS = """
import pytest
from tutor.harness.failures import DrillFailure

def test_ok():
    pass

def test_diagnosed():
    raise DrillFailure(
        "padding-where", "y: 3 of 10 values differ", "Your y matches x.", line=12,
        facts={"wrong": 3, "total": 10, "pattern": "end", "odd": object()},
    )

def test_plain_assert():
    assert 1 == 2

def test_error():
    raise KeyError("k")

@pytest.fixture
def broken():
    raise DrillFailure("syntax-error", "mine.py:3: syntax error", line=3)

def test_setup_fails(broken):
    pass

def test_skipped():
    pytest.skip("no GPU")

def test_slow_call():
    import time
    time.sleep(0.3)
"""


@pytest.fixture(scope="module")
def event_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The events of one session of TESTS in a child pytest (torch's import makes a child
    cost seconds: the tests below read the same session, once per xdist worker)."""
    folder = tmp_path_factory.mktemp("events")
    (folder / "test_sample.py").write_text(TESTS, encoding="utf-8")
    path = folder / "events.jsonl"
    result = subprocess.run(
        # With the drill plugin, as every drill's run has it: its kernel language names the backend.
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tutor.run.pytest_events",
            "-p",
            "tutor.harness.drill_plugin",
            "--cpu",
            f"--tutor-events={path}",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    return path.read_text().splitlines()


@pytest.fixture
def events(event_lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in event_lines]


def test_one_event_per_test_in_order(events):
    kinds = [e["event"] for e in events]
    assert kinds[0] == "session_start" and kinds[-1] == "session_end"
    tests = [e for e in events if e["event"] == "test"]
    assert [t["id"].split("::")[1] for t in tests] == [
        "test_ok",
        "test_diagnosed",
        "test_plain_assert",
        "test_error",
        "test_setup_fails",
        "test_skipped",
        "test_slow_call",
    ]
    assert kinds.count("test_start") == 7
    # Every test's start comes before its result.
    starts = {e["id"]: i for i, e in enumerate(events) if e["event"] == "test_start"}
    for test in tests:
        assert starts[test["id"]] < events.index(test)


def test_outcomes_diagnoses_and_messages(events):
    by_name = {e["id"].split("::")[1]: e for e in events if e["event"] == "test"}
    assert by_name["test_ok"]["outcome"] == "passed" and by_name["test_ok"]["diagnosis"] is None
    diagnosed = by_name["test_diagnosed"]
    assert diagnosed["outcome"] == "failed"
    assert diagnosed["diagnosis"] == "padding-where"
    assert diagnosed["message"] == "y: 3 of 10 values differ"
    assert diagnosed["details"] == "Your y matches x." and diagnosed["line"] == 12
    # The numbers for the hint texts travel with it; what JSON cannot carry is dropped.
    assert diagnosed["facts"] == {"wrong": 3, "total": 10, "pattern": "end"}
    from tutor.run.events import TestFinished, decode

    decoded = decode(json.dumps(diagnosed))
    assert isinstance(decoded, TestFinished) and decoded.result.facts == diagnosed["facts"]
    assert by_name["test_plain_assert"]["diagnosis"] == "mismatch"
    assert by_name["test_error"]["diagnosis"] is None
    assert by_name["test_error"]["message"].startswith("KeyError")
    setup = by_name["test_setup_fails"]
    assert (setup["outcome"], setup["diagnosis"], setup["line"]) == ("failed", "syntax-error", 3)
    assert by_name["test_skipped"]["outcome"] == "skipped"


def test_session_start_names_the_backend_the_kernel_language_chose(events):
    start = events[0]
    assert start["backend"] == "cpu-interpreter"
    assert start["torch"] and start["triton"]


def test_no_events_without_the_option(pytester: pytest.Pytester):
    pytester.makepyfile(test_sample="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "tutor.run.pytest_events")
    assert result.ret == 0
    assert not list(pytester.path.glob("*.jsonl"))


def test_a_test_s_duration_counts_its_call(events):
    """Set-up, call and tear-down together: a test that sleeps 0.3 s took at least that."""
    (slow,) = [e for e in events if e["event"] == "test" and e["id"].endswith("::test_slow_call")]
    assert slow["outcome"] == "passed" and slow["duration"] >= 0.3


def test_the_collected_tests_come_before_the_first_starts_and_the_stream_is_trusted(events):
    """The list the run keeps every later event to (tutor.run.trust): sent before any test
    sets up, so before a learner's file is imported."""
    from tutor.run.events import Fold, decode
    from tutor.run.results import RunResult

    assert [e["event"] for e in events[:2]] == ["session_start", "collected"]
    assert events[1]["ids"] == [e["id"] for e in events if e["event"] == "test_start"]
    fold = Fold(RunResult("sample", "mine", "failed"))
    for event in events:
        fold.apply(decode(json.dumps(event)))
    assert fold.ledger.verdict(1) == ""  # pytest exited 1: some tests failed
