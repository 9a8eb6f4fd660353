"""The app's plain logic, without a running app: marks, next drill, live rows, wording, editor."""

from __future__ import annotations

import json
from pathlib import Path

from tutor.coach.run_hints import HintView
from tutor.course import progress as p
from tutor.course.catalogue import load_catalogue
from tutor.course.progress import ProgressStore
from tutor.run import results as r
from tutor.run.events import decode
from tutor.states import DrillStatus, RunStatus
from tutor.ui import marks
from tutor.ui.environment import CPU_LABEL, backend_label, editor_command
from tutor.ui.live import RUNNING, LiveRun
from tutor.ui.widgets.hint_panel import coach_markdown
from tutor.ui.widgets.run_panel import summary


def test_marks_tell_the_four_states_apart():
    states = [
        p.DrillProgress(),
        p.DrillProgress(status=DrillStatus.FAILING),
        p.DrillProgress(status=DrillStatus.PASSED, solved_with_hints=True),
        p.DrillProgress(status=DrillStatus.PASSED, solved_with_hints=False),
    ]
    seen = [marks.mark(s) for s in states]
    assert seen == [marks.NOT_STARTED, marks.FAILING, marks.PASSED_WITH_HINTS, marks.PASSED_CLEAN]
    assert len(set(seen)) == 4


def test_next_unfinished_skips_passed_and_coming_drills_and_wraps(small_course):
    catalogue = load_catalogue(small_course)
    store = ProgressStore(small_course.progress_file)
    assert marks.next_unfinished(catalogue, store).id == "a1"
    store.drill("a2").status = DrillStatus.PASSED
    assert marks.next_unfinished(catalogue, store, after="a1").id == "b1"
    assert marks.next_unfinished(catalogue, store, after="b1").id == "a1"  # b2 is coming
    for drill_id in ("a1", "b1"):
        store.drill(drill_id).status = DrillStatus.PASSED
    assert marks.next_unfinished(catalogue, store, after="a1") is None
    assert marks.passed_count(catalogue, store) == (3, 3)


def test_state_of_does_not_add_entries_to_the_store(small_course):
    store = ProgressStore(small_course.progress_file)
    assert marks.state_of(store, "a1").status == DrillStatus.NOT_STARTED
    assert store.drills == {}


def test_live_run_fills_rows_from_events_then_from_the_result():
    live = LiveRun("a1", token=1)

    def feed(event: dict) -> None:
        live.feed(decode(json.dumps(event)))

    feed({"event": "session_start", "backend": "cuda", "device_name": "NVIDIA H200"})
    feed({"event": "test_start", "id": "f.py::test_a"})
    assert [(row.name, row.outcome) for row in live.rows.values()] == [("test_a", RUNNING)]
    feed(
        {
            "event": "test",
            "id": "f.py::test_a",
            "outcome": "failed",
            "diagnosis": "padding-where",
            "message": "y differs",
        }
    )
    feed({"event": "test_start", "id": "f.py::test_b"})
    result = r.RunResult(
        "a1",
        "mine",
        RunStatus.TIMEOUT,
        message="killed after 120 s",
        tests=[r.TestResult("f.py::test_a", "failed", "padding-where")],
    )
    live.finish(result)
    assert [(row.name, row.outcome) for row in live.rows.values()] == [
        ("test_a", "failed"),
        ("test_b", RunStatus.TIMEOUT),
    ]
    assert live.device_name == "NVIDIA H200" and live.finished


def test_summary_names_how_a_run_ended():
    ok = LiveRun.from_result(
        r.RunResult(
            "a1", "mine", RunStatus.PASSED, duration=2.04, tests=[r.TestResult("f::t", "passed")]
        )
    )
    assert summary(ok) == ("Passed: all 1 tests (2.0 s)", "-passed")
    crashed = LiveRun.from_result(
        r.RunResult(
            "a1", "mine", RunStatus.CRASHED, message="the test process died (signal SIGSEGV)"
        )
    )
    assert summary(crashed) == ("Crashed: the test process died", "-broken")
    assert summary(None)[0].startswith("No run yet")
    earlier = {"status": "failed", "passed_tests": 2, "tests": 5, "at": "2025-01-01T10:00:00"}
    assert "2 of 5 tests passed" in summary(None, earlier)[0]


def test_coach_wording_has_no_stage_counters(small_course):
    drill = load_catalogue(small_course).drill("a1")
    failing = p.DrillProgress(status=DrillStatus.FAILING, last_run={"status": "failed"})
    view = HintView("a1", "x", "A title", ("first", "second"), exhausted=False)
    text = coach_markdown(drill, failing, view, None)
    assert "first" in text and "second" in text and "further hint" in text
    assert "2 of" not in text and "/3" not in text
    done = HintView("a1", "x", "A title", ("first", "second", "third"), exhausted=True)
    assert "solution is available" in coach_markdown(drill, failing, done, None)
    passed = p.DrillProgress(status=DrillStatus.PASSED, last_run={"status": "passed"})
    text = coach_markdown(drill, passed, None, load_catalogue(small_course).drill("a2"))
    assert drill.taught in text and "**s**" in text and "a2" in text


def test_a_hint_fences_its_code_in_the_drills_kernel_language():
    """A CUDA C++ drill's fix is highlighted as C++, a Triton drill's as Python."""
    from tutor.course.paths import CoursePaths

    catalogue = load_catalogue(CoursePaths(Path(__file__).resolve().parents[2]))
    failing = p.DrillProgress(status=DrillStatus.FAILING, last_run={"status": "failed"})
    stage = "const float rstd = rsqrtf(total / n_cols + eps);"
    for drill_id, fence in (("c2", "```cpp\n"), ("t3", "```python\n")):
        view = HintView(drill_id, "x", "A title", (stage,), exhausted=False)
        assert fence + stage in coach_markdown(catalogue.drill(drill_id), failing, view, None)


def test_editor_comes_from_visual_then_editor_then_what_is_installed():
    nothing = lambda name: None  # noqa: E731
    assert editor_command({}, which=nothing) is None
    assert editor_command({"EDITOR": "nano"}, which=nothing) == ["nano"]
    assert editor_command({"EDITOR": "nano", "VISUAL": "code --wait"}) == ["code", "--wait"]
    installed = {"vi": "/usr/bin/vi", "nano": "/bin/nano"}
    assert editor_command({}, which=installed.get) == ["/bin/nano"]  # nano before vi
    assert editor_command({}, which={"vi": "/usr/bin/vi"}.get) == ["/usr/bin/vi"]


def test_backend_label():
    assert backend_label("cpu-interpreter", "CPU (Triton interpreter)") == CPU_LABEL
    assert backend_label("cuda", "NVIDIA H200") == "NVIDIA H200"
