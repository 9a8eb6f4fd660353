"""The runner keeps the learner's code in a child process and turns every ending into a status."""

from __future__ import annotations

import threading
from pathlib import Path

from tutor.course import diagnoses as dx
from tutor.course.catalogue import load_catalogue
from tutor.run.events import SessionEnded, SessionStarted, TestFinished
from tutor.run.runner import Runner
from tutor.states import RunStatus

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_solution_streams_events_and_passes(catalogue):
    events = []
    result = Runner(catalogue, force_cpu=True).run("t3", "solutions", on_event=events.append)
    assert result.status == RunStatus.PASSED, result.output
    assert result.backend == "cpu-interpreter"
    assert result.diagnoses == []
    finished = [e for e in events if isinstance(e, TestFinished)]
    assert [e.result for e in finished] == result.tests and len(finished) > 5
    assert isinstance(events[0], SessionStarted) and isinstance(events[-1], SessionEnded)


def test_hanging_kernel_is_killed_at_the_timeout(catalogue):
    # The limit counts from the first test, which is the one that hangs: a short one is enough.
    result = Runner(catalogue, force_cpu=True, timeout=3).run("t3", str(FIXTURES / "t3_hangs.py"))
    assert result.status == RunStatus.TIMEOUT
    assert "killed after 3 s while running test_" in result.message
    assert result.diagnoses == [dx.KERNEL_HANG]


def test_crash_becomes_a_status_not_a_dead_tutor(catalogue):
    result = Runner(catalogue, force_cpu=True).run("t3", str(FIXTURES / "t3_segfaults.py"))
    assert result.status == RunStatus.CRASHED
    assert "SIGSEGV" in result.message and "while running test_" in result.message
    assert result.diagnoses == [dx.PROCESS_CRASHED]


def test_syntax_error_names_the_file_and_line(catalogue, monkeypatch):
    """Found by compiling the file in the tutor's process, before any run: no child starts
    (a cold run took 8 s to say the same)."""
    from tutor.run import host

    def no_child(*args, **kwargs):
        raise AssertionError("a file that does not compile started a run")

    monkeypatch.setattr(host, "supervise", no_child)  # where every local run starts
    result = Runner(catalogue, force_cpu=True).run("t3", str(FIXTURES / "t3_syntax_error.py"))
    assert result.status == RunStatus.FAILED
    assert result.diagnoses == [dx.SYNTAX_ERROR]
    first = result.tests[0]
    assert first.line == 7 and "t3_syntax_error.py:7" in first.message


def test_missing_learner_file(catalogue, tmp_path):
    result = Runner(catalogue, force_cpu=True).run("t3", str(tmp_path / "nope.py"))
    assert result.status == RunStatus.SETUP_ERROR and result.diagnoses == [dx.MISSING_FILE]


def test_cancel_kills_the_run(catalogue):
    cancel = threading.Event()
    timer = threading.Timer(3.0, cancel.set)
    timer.start()
    result = Runner(catalogue, force_cpu=True, timeout=600).run(
        "t3", str(FIXTURES / "t3_hangs.py"), cancel=cancel
    )
    assert (
        result.status == RunStatus.CANCELLED
    )  # long before the 600 s limit: the cancel stopped it


def test_the_child_takes_the_drills_functions_from_the_runner(course):
    # The runner has read drills.yaml; its child is told what the file must define and does
    # not read it again (here it could not: it is broken once the catalogue is loaded).
    catalogue = load_catalogue(course)
    course.catalogue.write_text("drills: [not a catalogue\n")
    result = Runner(catalogue, force_cpu=True).run("t0", "solutions")
    assert result.status == RunStatus.PASSED, result.message or result.output
    starter = Runner(catalogue, force_cpu=True).run("t0", "starter")
    assert starter.diagnoses == [dx.NOT_WRITTEN]  # the functions were found by the names given
