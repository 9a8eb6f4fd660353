"""The session object alone (no Textual): runs and their tokens, the bench, the app's writes."""

from __future__ import annotations

from pathlib import Path

from tutor.run import results as r
from tutor.run.events import SessionStarted, TestFinished, TestStarted
from tutor.states import RunStatus
from tutor.ui.session import Session


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _result(drill: str, status=RunStatus.FAILED) -> r.RunResult:
    return r.RunResult(drill, "mine", status, tests=[r.TestResult("f::t", "failed", "x")])


def test_a_new_run_cancels_the_old_one_and_its_late_news_is_dropped():
    session = Session()
    first = session.start_run("a1")
    second = session.start_run("a2")
    assert first.cancel.is_set() and not second.cancel.is_set()
    assert second.token == first.token + 1
    assert session.feed("a1", first.token, TestStarted("f::t")) is None
    assert session.finish("a1", first.token, _result("a1", RunStatus.CANCELLED)) is None
    assert not session.running("a1") and session.running("a2")
    live = session.feed("a2", second.token, SessionStarted("cpu-interpreter", "CPU"))
    assert live is session.shown_run("a2") and live.backend == "cpu-interpreter"


def test_a_finished_run_is_shown_until_the_drill_is_reset():
    session = Session()
    ticket = session.start_run("a1")
    session.feed("a1", ticket.token, TestStarted("f::t"))
    assert [row.outcome for row in session.shown_run("a1").rows.values()] == ["running"]
    session.feed("a1", ticket.token, TestFinished(r.TestResult("f::t", "failed", "x")))
    done = session.finish("a1", ticket.token, _result("a1"))
    assert done is not None and done.finished and session.shown_run("a1") is done
    assert session.finish("a1", ticket.token, _result("a1")) is None  # told twice: once only
    session.forget("a1")
    assert session.shown_run("a1") is None


def test_a_cancelled_run_leaves_the_previous_result_on_show():
    session = Session()
    ticket = session.start_run("a1")
    done = session.finish("a1", ticket.token, _result("a1"))
    again = session.start_run("a1")
    assert session.shown_run("a1") is not done  # the live run is on show while it runs
    assert session.finish("a1", again.token, _result("a1", RunStatus.CANCELLED)) is None
    assert session.shown_run("a1") is done


def test_elapsed_time_of_the_live_run():
    clock = Clock()
    session = Session(clock=clock)
    assert session.elapsed("a1") is None
    ticket = session.start_run("a1")
    clock.now += 12.5
    assert session.elapsed("a1") == 12.5
    session.finish("a1", ticket.token, _result("a1"))
    assert session.elapsed("a1") is None


def test_one_bench_at_a_time_with_its_lines():
    session = Session()
    cancel = session.start_bench("a1", "Timing a1…")
    assert cancel is not None and session.bench_drill == "a1"
    assert session.start_bench("a2", "Timing a2…") is None
    assert session.bench_line("a1", "shape 1") == ["Timing a1…", "shape 1"]
    session.finish_bench("a1", ["report"])
    assert session.bench_drill is None and session.bench_lines["a1"] == ["report"]
    assert session.start_bench("a2", "Timing a2…") is not None
    session.stop_all()
    assert session.bench_cancel.is_set()


def test_the_apps_own_writes_are_recognised_once(tmp_path: Path):
    session = Session()
    path = tmp_path / "a1_add.py"
    session.note_write(path, "starter")
    assert not session.is_own_write(path, "the learner's edit")  # asked once, then forgotten
    session.note_write(path, "starter")
    assert session.is_own_write(path, "starter")
    assert not session.is_own_write(path, "starter")


def test_a_reset_cancels_the_run_in_progress_and_drops_its_result():
    session = Session()
    ticket = session.start_run("a1")
    session.forget("a1")
    assert ticket.cancel.is_set() and not session.running("a1")
    late = r.RunResult("a1", "mine", RunStatus.PASSED, tests=[r.TestResult("t::a", "passed")])
    assert session.finish("a1", ticket.token, late) is None  # the old file's result: dropped
    assert session.shown_run("a1") is None


def test_a_finished_run_gives_way_once_the_progress_file_holds_another_last_run():
    session = Session()
    for drill in ("a1", "a2"):
        ticket = session.start_run(drill)
        session.finish(drill, ticket.token, _result(drill))
        session.note_recorded(drill, {"status": "failed", "at": "10:00"})
    # The app's own records change nothing; `tutor reset a1` (no last run) and `tutor check a2`
    # (a later one) make both finished runs describe a file that is gone.
    assert session.outdated({"a1": {"status": "failed", "at": "10:00"}, "a2": None}) == ["a2"]
    assert session.shown_run("a2") is None and session.shown_run("a1") is not None
    assert session.outdated({"a1": {"status": "passed", "at": "10:05"}}) == ["a1"]
    assert session.shown_run("a1") is None
