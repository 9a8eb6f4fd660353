"""Pilot tests of the drill screen: selecting, running, hints, solution, reset, next, watch."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import threading
from pathlib import Path

import pytest
from tui_fakes import Scripted, failing
from tui_helpers import SIZE, drill_screen, settle, shown_text, wait_until
from tui_snapshot import region_text

from tutor.bench import BenchReport, BenchRow
from tutor.bench.record import Rates, SideTimes
from tutor.course.progress import ProgressStore
from tutor.run import results as r
from tutor.states import BenchStatus, DrillStatus, RunStatus
from tutor.ui import marks
from tutor.ui.messages import (
    BenchFinished,
    BenchProgress,
    BenchRequested,
    RunEvent,
    RunFinished,
    RunStarted,
)
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.screens.help import HelpScreen
from tutor.ui.screens.solution import SolutionScreen
from tutor.ui.widgets.bench_panel import BenchPanel
from tutor.ui.widgets.code_view import CodeView
from tutor.ui.widgets.drill_list import DrillList
from tutor.ui.widgets.hint_panel import HintPanel
from tutor.ui.widgets.run_panel import RunPanel
from tutor.ui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]

TAIL_TITLE = "The tail block reads past the end"
STAGE_1 = "What happens in the last block"
STAGE_2 = "The offsets of the last program run past n"
STAGE_3 = "Load with mask=offsets < n"


def hint_text(app) -> str:
    return drill_screen(app).query_one(HintPanel).markdown


async def run_and_wait(pilot, recorder, count: int = 1) -> None:
    await pilot.press("r")
    await wait_until(pilot, lambda: len(recorder.of(RunFinished)) >= count, "the run to end")
    await settle(pilot)


async def test_opens_on_the_first_unfinished_drill_showing_its_starter(make_app, small_course):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        assert screen.selected == "a1"
        starter = small_course.starter("a1_add.py").read_text()
        shown = screen.query_one(CodeView).text
        assert shown.startswith("# [tutor: the starter (Enter, e or r makes your copy)]")
        assert shown.endswith(starter)
        assert not small_course.mine("a1_add.py").exists()  # looking creates nothing
        assert screen.query_one(StatusBar).backend == "CPU interpreter"
        assert "watch off" in str(screen.query_one("#watch").render())
        assert "Start here" in hint_text(app) and "**Enter** makes it" in hint_text(app)


async def test_moving_through_the_list_creates_no_file_and_enter_or_r_does(
    make_app, small_course, runner, recorder
):
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        screen = drill_screen(app)
        assert screen.selected == "a2"
        assert screen.query_one(CodeView).text.endswith(
            small_course.starter("a2_rowsum.py").read_text()
        )
        await pilot.press("down")  # the track heading is skipped
        await settle(pilot)
        assert screen.selected == "b1"
        assert not small_course.mine("_").parent.exists() or not any(
            small_course.mine("_").parent.iterdir()
        )
        await pilot.press("enter")  # open b1: its file is made, and shown
        await settle(pilot)
        mine = small_course.mine("b1_scale.py")
        assert mine.read_text() == small_course.starter("b1_scale.py").read_text()
        assert screen.query_one(CodeView).text == mine.read_text()
        assert screen.query_one("#tabs").active == "code-tab"
        assert "drills/mine/b1_scale.py" in recorder.notices()[-1]
        assert "`drills/mine/b1_scale.py`. Press **e** to open it." in hint_text(app)
        await pilot.press("up")  # the track heading is skipped
        await settle(pilot)
        assert screen.selected == "a2" and not small_course.mine("a2_rowsum.py").exists()
        await run_and_wait(pilot, recorder)  # running it makes it too
        assert small_course.mine("a2_rowsum.py").exists()
        assert [c.drill_id for c in runner.calls] == ["a2"]


async def test_run_streams_results_test_by_test(make_app, runner, recorder):
    runner.script(
        "a1",
        Scripted(
            [("test_small", "passed", None), ("test_tail[1000]", "failed", "missing-tail-mask")],
            hold_after=1,
        ),
    )
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("r")
        panel = drill_screen(app).query_one(RunPanel)
        await wait_until(
            pilot,
            lambda: panel.shown and "test_small" in str(list(panel.shown.rows)),
            "the first test's row",
        )
        assert [row.outcome for row in panel.shown.rows.values()] == ["passed"]
        assert panel.summary_line.startswith("Running the tests")
        assert not recorder.of(RunFinished)
        runner.release.set()
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the run to end")
        await settle(pilot)
        assert [row.outcome for row in panel.shown.rows.values()] == ["passed", "failed"]
        assert panel.summary_line.startswith("Failed: 1 of 2 tests")
        assert panel.title_of("a1", "missing-tail-mask") == TAIL_TITLE
        kinds = [type(m.event).__name__ for m in recorder.of(RunEvent)]
        assert kinds == [
            "SessionStarted",
            "TestStarted",
            "TestFinished",
            "TestStarted",
            "TestFinished",
            "SessionEnded",
        ]
        order = [type(m) for m in recorder.messages if type(m) in (RunStarted, RunFinished)]
        assert order == [RunStarted, RunFinished]
        # Stage 1 of the diagnosis shows by itself, and only stage 1.
        assert TAIL_TITLE in hint_text(app) and STAGE_1 in hint_text(app)
        assert STAGE_2 not in hint_text(app)
        assert drill_screen(app).query_one(DrillList).marks["a1"] == marks.FAILING


async def test_h_reveals_one_stage_per_press_without_counters(
    make_app, runner, recorder, small_course
):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        await pilot.press("h")
        await settle(pilot)
        assert STAGE_2 in hint_text(app) and STAGE_3 not in hint_text(app)
        saved = json.loads(small_course.progress_file.read_text())
        assert saved["drills"]["a1"]["hints"] == {"missing-tail-mask": 2}
        await pilot.press("h")
        await settle(pilot)
        text = hint_text(app)
        assert STAGE_3 in text and "solution is available with **s**" in text
        assert not any(f"{n} of 3" in text or f"{n}/3" in text for n in (1, 2, 3))
        await pilot.press("h")
        await settle(pilot)
        assert "every hint for this mistake" in recorder.notices()[-1]
        assert ProgressStore(small_course.progress_file).drill("a1").hints == {
            "missing-tail-mask": 3
        }


async def test_h_before_any_failure_says_why_there_is_no_hint(make_app, recorder):
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("h")
        await settle(pilot)
        assert recorder.notices()[-1].startswith("No hint yet")


async def test_solution_refused_before_a_pass_and_shown_after(
    make_app, runner, recorder, small_course
):
    runner.script("a1", failing(), Scripted())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert "solution opens after your file passes" in recorder.notices()[-1]
        assert not isinstance(app.screen, SolutionScreen)
        await run_and_wait(pilot, recorder)
        await pilot.press("s")
        await settle(pilot)
        assert not isinstance(app.screen, SolutionScreen)  # failing: still locked
        await run_and_wait(pilot, recorder, count=2)
        assert "What this drill taught:** A 1-D grid and a masked tail." in hint_text(app)
        assert "press **n** for a2" in hint_text(app)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SolutionScreen)
        reference = app.screen.query_one("#solution-reference", CodeView).text
        assert reference == small_course.solution("a1_add.py").read_text()
        assert (
            app.screen.query_one("#solution-mine", CodeView).text
            == small_course.mine("a1_add.py").read_text()
        )
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, SolutionScreen)


async def test_solution_opens_once_the_last_hint_stage_is_out(make_app, runner, recorder):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        await pilot.press("h", "h")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SolutionScreen)


async def test_reset_asks_first_and_keeps_a_backup(make_app, small_course, recorder):
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        mine = small_course.mine("a1_add.py")
        mine.parent.mkdir(parents=True, exist_ok=True)
        mine.write_text("def add(x):\n    return x + 1  # my work\n")
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert "my work" in mine.read_text()
        assert not small_course.backups.exists()
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert mine.read_text() == small_course.starter("a1_add.py").read_text()
        [backup] = small_course.backups.iterdir()
        assert "my work" in backup.read_text()
        assert f".tutor/backups/{backup.name}" in recorder.notices()[-1]
        assert drill_screen(app).query_one(CodeView).text == mine.read_text()


async def test_n_goes_to_the_next_drill_not_yet_passed(make_app, small_course, runner, recorder):
    store = ProgressStore(small_course.progress_file)
    store.drill("a2").status = DrillStatus.PASSED
    store.save()
    runner.script("b1", Scripted())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        assert screen.selected == "a1"
        await pilot.press("n")
        await settle(pilot)
        assert screen.selected == "b1"  # a2 is passed already
        await pilot.press("n")
        await settle(pilot)
        assert screen.selected == "a1"  # wraps round
        store.drill("a1").status = DrillStatus.PASSED
        store.save()
        await pilot.press("n")
        await settle(pilot)
        assert screen.selected == "b1"
        await run_and_wait(pilot, recorder)
        await pilot.press("n")
        await settle(pilot)
        assert recorder.notices()[-1] == "Every drill is passed."
        assert "every drill is passed" in hint_text(app)


async def test_single_letter_keys_work_with_the_code_view_focused(make_app, runner, recorder):
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        screen.query_one("#tabs").active = "code-tab"
        screen.query_one(CodeView).focus()
        await settle(pilot)
        assert app.focused is screen.query_one(CodeView)
        await run_and_wait(pilot, recorder)
        assert [c.drill_id for c in runner.calls] == ["a1"]
        before = screen.query_one(CodeView).text
        await pilot.press("w")
        await settle(pilot)
        assert screen.watching
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert screen.query_one(CodeView).text == before  # nothing was typed into it


async def test_w_toggles_watch_and_its_worker(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        status = screen.query_one(StatusBar)
        assert not screen.watching and not status.has_class("-watching")
        await pilot.press("w")
        await settle(pilot)
        assert screen.watching and status.has_class("-watching")
        assert "watch on" in str(status.query_one("#watch").render())
        assert [w for w in app.workers if w.group == "watch" and not w.is_finished]
        await pilot.press("w")
        await settle(pilot)
        assert not screen.watching and not status.has_class("-watching")
        await wait_until(
            pilot,
            lambda: not [w for w in app.workers if w.group == "watch" and not w.is_finished],
            "the watcher to stop",
        )


async def test_saving_a_learner_file_reruns_that_drill_and_selects_it(
    make_app, runner, small_course, recorder
):
    app = make_app(watch=True, watch_debounce_ms=300, watch_step_ms=50)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.pause(0.3)  # the watcher is up
        mine = small_course.mine("b1_scale.py")
        mine.parent.mkdir(parents=True, exist_ok=True)
        mine.write_text("def scale(x):\n    return x * 2\n")
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the watched run")
        await settle(pilot)
        screen = drill_screen(app)
        assert [c.drill_id for c in runner.calls] == ["b1"]
        assert screen.selected == "b1"
        assert "x * 2" in screen.query_one(CodeView).text


async def test_a_save_of_the_drill_on_show_is_run_before_the_code_view_lays_it_out(
    make_app, runner, small_course, recorder
):
    """The code view's layout holds the main thread (and the GIL) for a tenth of a second on a
    small machine: the run's thread asks for its fork first, and the view shows the new code."""
    app = make_app(watch=True, watch_debounce_ms=300, watch_step_ms=50)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.pause(0.3)  # the watcher is up
        mine = small_course.mine("b1_scale.py")
        mine.parent.mkdir(parents=True, exist_ok=True)
        mine.write_text("def scale(x):\n    return x * 2\n")
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the first run")
        await settle(pilot)
        screen = drill_screen(app)
        runs_when_laid_out = []
        lay_out = screen._refresh_code

        def counted() -> None:
            runs_when_laid_out.append(len(runner.calls))
            lay_out()

        screen._refresh_code = counted
        mine.write_text("def scale(x):\n    return x * 3\n")
        await wait_until(pilot, lambda: len(recorder.of(RunFinished)) == 2, "the second run")
        await settle(pilot)
        assert [c.drill_id for c in runner.calls] == ["b1", "b1"]
        assert runs_when_laid_out and runs_when_laid_out[0] == 2
        assert "x * 3" in screen.query_one(CodeView).text


async def test_the_apps_own_copy_of_a_starter_does_not_trigger_a_run(
    make_app, runner, small_course
):
    app = make_app(watch=True, watch_debounce_ms=200, watch_step_ms=50)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.pause(0.3)
        await pilot.press("down", "enter")  # a2: its learner file is created now
        await settle(pilot)
        await pilot.pause(1.0)
        assert small_course.mine("a2_rowsum.py").exists()
        assert runner.calls == []


async def test_a_new_run_cancels_the_one_in_progress(make_app, runner, recorder):
    runner.script(
        "a1",
        Scripted([("test_small", "passed", None), ("test_loop", "failed", None)], hang=True),
        Scripted(),
    )
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, runner.started.is_set, "the first run to hang")
        await pilot.press("r")
        await wait_until(pilot, lambda: len(recorder.of(RunFinished)) == 2, "both runs to end")
        await settle(pilot)
        first, second = runner.calls
        assert first.cancel.is_set() and not second.cancel.is_set()
        ended = {m.token: m.result.status for m in recorder.of(RunFinished)}
        assert ended == {1: RunStatus.CANCELLED, 2: RunStatus.PASSED}  # in either order
        panel = drill_screen(app).query_one(RunPanel)
        assert panel.summary_line.startswith("Passed: all 1 tests")
        state = ProgressStore(app.store.path).drill("a1")
        assert state.runs == 1  # the cancelled run is not counted


@pytest.mark.parametrize(
    ("status", "message", "heading", "diagnosis"),
    [
        (
            RunStatus.TIMEOUT,
            "killed after 120 s while running test_loop",
            "Timed out",
            "kernel-hang",
        ),
        (RunStatus.CRASHED, "the test process died (signal SIGSEGV)", "Crashed", "process-crashed"),
    ],
)
async def test_hangs_and_crashes_show_as_such(
    make_app, runner, recorder, status, message, heading, diagnosis
):
    runner.script("a1", Scripted([("test_small", "passed", None)], status=status, message=message))
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        panel = drill_screen(app).query_one(RunPanel)
        assert panel.summary_line.startswith(heading)
        assert panel.has_class("-broken")
        assert message in str(panel.query_one("#run-failure").render())
        assert app.coach.current("a1").diagnosis == diagnosis
        assert "A kernel that never finishes" in hint_text(app) or diagnosis != "kernel-hang"


async def test_a_runner_that_raises_is_reported_not_fatal(make_app, runner, recorder):
    runner.script("a1", Scripted(raises=RuntimeError("no python")))
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        panel = drill_screen(app).query_one(RunPanel)
        assert panel.summary_line == "Could not run the tests"
        assert "the tutor could not run the tests: no python" in str(
            panel.query_one("#run-failure").render()
        )
        assert app.is_running


async def test_the_app_and_the_progress_file_agree(make_app, small_course, runner, recorder):
    store = ProgressStore(small_course.progress_file)
    store.drill("a2").status = DrillStatus.PASSED
    store.drill("a2").solved_with_hints = True
    store.save()
    runner.script("a1", Scripted())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        drills = drill_screen(app).query_one(DrillList)
        assert drills.marks["a2"] == marks.PASSED_WITH_HINTS
        assert drills.marks["a1"] == marks.NOT_STARTED
        await run_and_wait(pilot, recorder)
        assert drills.marks["a1"] == marks.PASSED_CLEAN
        assert "Passed 2 of 3 drills" in str(
            drill_screen(app).query_one("#progress-label").render()
        )
    fresh = ProgressStore(small_course.progress_file)
    assert fresh.drill("a1").status == DrillStatus.PASSED and fresh.drill("a1").runs == 1
    assert fresh.drill("a1").solved_with_hints is False


async def test_e_without_an_editor_says_how_to_set_one(make_app, recorder, monkeypatch, tmp_path):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # not even vi
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        notice = recorder.notices()[-1]
        assert notice.startswith("No editor found") and "export EDITOR=" in notice
        assert "drills/mine/a1_add.py" in notice and "EDITOR=nano" not in notice


@pytest.mark.parametrize("installed", [["vi"], ["nano", "vi"], ["editor", "nano", "vi"]])
async def test_e_without_editor_variables_opens_the_first_editor_installed(
    make_app, small_course, monkeypatch, tmp_path, installed
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in installed:  # each stand-in signs the file with its own name
        program = bin_dir / name
        program.write_text(f"#!/bin/sh\nprintf '# edited by {name}\\n' >> \"$1\"\n")
        program.chmod(0o755)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))  # only the stand-ins (sh runs them by path)
    app = make_app()
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless: cannot suspend
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert small_course.mine("a1_add.py").read_text().endswith(f"# edited by {installed[0]}\n")


async def test_e_suspends_the_app_for_the_editor_and_shows_the_edit(
    make_app, small_course, monkeypatch, tmp_path
):
    editor = tmp_path / "fake-editor"
    editor.write_text("#!/bin/sh\nprintf '# edited\\n' >> \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    app = make_app()
    suspended = threading.Event()

    class Suspend:
        def __enter__(self):
            suspended.set()

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(app, "suspend", Suspend)  # the headless driver cannot suspend
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert suspended.is_set()
        assert small_course.mine("a1_add.py").read_text().endswith("# edited\n")
        screen = drill_screen(app)
        assert screen.query_one("#tabs").active == "code-tab"
        assert screen.query_one(CodeView).text.endswith("# edited\n")


async def test_bench_on_the_cpu_says_it_needs_a_gpu(make_app, recorder):
    called = []
    app = make_app(bench=lambda *args, **kwargs: called.append(args))
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        assert [m.drill_id for m in recorder.of(BenchRequested)] == ["a1"]
        assert "bench needs a GPU" in recorder.notices()[-1]
        screen = drill_screen(app)
        assert screen.query_one("#tabs").active == "bench-tab"
        assert str(screen.query_one(BenchPanel).render()).startswith("bench needs a GPU")
        assert called == []


async def test_the_status_bar_names_the_remote_host_the_kernels_run_on(make_app):
    """`tutor --on gpu-box`: the GPU the probe names is the host's, and the bar says where."""
    app = make_app(force_cpu=False, gpu_probe=lambda: "NVIDIA H200", host_name="gpu-box")
    async with app.run_test(size=SIZE) as pilot:
        screen = drill_screen(app)
        await wait_until(pilot, lambda: screen.on_gpu, "the GPU probe")
        await settle(pilot)
        assert "NVIDIA H200 on gpu-box" in region_text(app, screen.query_one(StatusBar))


async def test_bench_on_a_gpu_streams_and_records_the_report(make_app, recorder, small_course):
    def fake_bench(catalogue, drill_id, impl, *, runner, force_cpu, on_progress, cancel):
        on_progress("timing add n=1048576 float32")
        report = BenchReport(
            drill=drill_id, impl=impl, status=BenchStatus.TIMED, device="NVIDIA H200"
        )
        row = BenchRow(label="add n=1048576 float32", rates=Rates(gbps=1000.0))
        row.times.mine = SideTimes(per_call_us=12.5)
        report.rows = [row]
        return report

    app = make_app(force_cpu=False, gpu_probe=lambda: "NVIDIA H200", bench=fake_bench)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        screen = drill_screen(app)
        await wait_until(pilot, lambda: screen.on_gpu, "the GPU probe")
        assert screen.query_one(StatusBar).backend == "NVIDIA H200"
        await pilot.press("b")
        await wait_until(pilot, lambda: recorder.of(BenchFinished), "the bench")
        await settle(pilot)
        assert [m.line for m in recorder.of(BenchProgress)] == ["timing add n=1048576 float32"]
        shown = str(screen.query_one(BenchPanel).render())
        assert "New best time for: add n=1048576 float32" in shown
    best = ProgressStore(small_course.progress_file).drill("a1").best_bench
    assert best["add n=1048576 float32"]["us"] == 12.5


async def test_the_bench_tab_coaches_and_h_reveals_the_next_perf_stage(
    make_app, recorder, small_course
):
    # The course's perf ladders (hints/common.yaml) in the fixture course.
    shutil.copyfile(ROOT / "hints" / "common.yaml", small_course.hints_dir / "common.yaml")
    spills = {
        "id": "spills",
        "text": "_add_kernel spills: each thread keeps 208 bytes in local memory",
        "numbers": {"kernel": "_add_kernel", "spill_bytes": 208, "n_regs": 255, "num_warps": 1},
    }

    def fake_bench(catalogue, drill_id, impl, *, runner, force_cpu, on_progress, cancel):
        report = BenchReport(
            drill=drill_id, impl=impl, status=BenchStatus.TIMED, device="NVIDIA H200"
        )
        row = BenchRow(label="add n=1048576 float32", function="add", shape={"n": 1048576})
        row.times.mine = SideTimes(per_call_us=50.0, graph_us=48.0)
        row.perf, row.perf_verdict = [spills], "spills"
        row.perf_ratio, row.yardstick = 1.65, "the reference"
        report.rows = [row]
        return report

    app = make_app(force_cpu=False, gpu_probe=lambda: "NVIDIA H200", bench=fake_bench)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        screen = drill_screen(app)
        await wait_until(pilot, lambda: screen.on_gpu, "the GPU probe")
        await pilot.press("b")
        await wait_until(pilot, lambda: recorder.of(BenchFinished), "the bench")
        await settle(pilot)
        shown = str(screen.query_one(BenchPanel).render())
        assert "add n=1048576: spills (1.65x the time of the reference)" in shown
        assert "Perf hint — Registers spill to local memory" in shown
        assert "spills 208 bytes per thread" in shown and "  2. " not in shown
        await pilot.press("h")
        await settle(pilot)
        shown = str(screen.query_one(BenchPanel).render())
        assert "  2. " in shown
    assert ProgressStore(small_course.progress_file).drill("a1").perf_hints == {"spills": 2}


async def test_help_lists_every_key_and_the_marks(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        keys = [key for key, _ in app.screen.keys]
        assert keys == [
            "Enter",
            "1",
            "2",
            "3",
            "Tab",
            "f",
            "Esc",
            "l",
            "a",
            "r",
            "h",
            "e",
            "w",
            "s",
            "x",
            "b",
            "n",
            "?",
            "L",
            "q",
        ]
        words = dict(app.screen.keys)
        assert "Lesson tab" in words["1"] and "PgDn" in words["1"]
        await pilot.press("question_mark")
        await settle(pilot)
        assert not isinstance(app.screen, HelpScreen)


async def test_self_check_answers_stay_folded_until_a(make_app, small_course):
    lesson = small_course.lesson("a1")
    lesson.write_text(
        "# A1\n\n1. Why a mask?\n\n<details><summary>Answer</summary>\n\n"
        "The last block runs past the end.\n\n</details>\n"
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        shown = lambda: screen.query_one("#lesson").source  # noqa: E731
        assert "runs past the end" not in shown() and "press a to show it" in shown()
        await pilot.press("a")
        await settle(pilot)
        assert "The last block runs past the end." in shown()
        await pilot.press("a")
        await settle(pilot)
        assert "runs past the end" not in shown()


async def test_q_quits(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_keys_1_2_3_switch_tabs(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tabs = drill_screen(app).query_one("#tabs")
        for key, tab in (("2", "code-tab"), ("3", "bench-tab"), ("1", "lesson-tab")):
            await pilot.press(key)
            await settle(pilot)
            assert tabs.active == tab


async def test_reset_clears_the_run_and_the_drill_result(make_app, runner, recorder, small_course):
    runner.script("a1", Scripted())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        panel = drill_screen(app).query_one(RunPanel)
        assert panel.summary_line.startswith("Passed: all 1 tests")
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert panel.summary_line.startswith("No run yet")
        assert drill_screen(app).query_one(StatusBar).activity == ""
        state = ProgressStore(small_course.progress_file).drill("a1")
        assert state.last_run is None and state.status == DrillStatus.NOT_STARTED and state.solved


async def test_a_drill_that_fails_after_a_pass_says_so(make_app, runner, recorder, small_course):
    runner.script("a1", Scripted(), failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        await run_and_wait(pilot, recorder, count=2)
        screen = drill_screen(app)
        assert screen.query_one(DrillList).marks["a1"] == marks.REGRESSED
        assert "passed this drill before" in hint_text(app)
        assert "Passed 1 of 3 drills" in str(screen.query_one("#progress-label").render())
    state = ProgressStore(small_course.progress_file).drill("a1")
    assert state.status == DrillStatus.FAILING and state.regressed


async def test_n_moves_the_status_bar_to_the_new_drill(make_app, runner, recorder):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        status = drill_screen(app).query_one(StatusBar)
        assert status.activity.startswith("a1: Failed")
        await pilot.press("n")
        await settle(pilot)
        assert drill_screen(app).selected == "a2" and status.activity == ""


async def test_hint_panel_never_shows_the_previous_runs_hint_during_a_run(
    make_app, runner, recorder
):
    runner.script("a1", failing(), Scripted([("test_small", "passed", None)], hold_after=1))
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        assert TAIL_TITLE in hint_text(app)
        await pilot.press("r")
        await wait_until(pilot, runner.started.is_set, "the second run to stream")
        await settle(pilot)
        assert TAIL_TITLE not in hint_text(app) and "Tests running" in hint_text(app)
        panel = drill_screen(app).query_one(RunPanel)
        assert panel.summary_line.startswith("Running the tests")
        runner.release.set()
        await wait_until(pilot, lambda: len(recorder.of(RunFinished)) == 2, "the second run")
        await settle(pilot)
        assert "Passed" in hint_text(app)


async def test_a_running_drill_shows_its_elapsed_time_and_limit(make_app, runner, recorder):
    runner.timeout = 120.0
    runner.script("a1", Scripted([("test_small", "passed", None)], hold_after=1))
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, runner.started.is_set, "the run to stream")
        panel = drill_screen(app).query_one(RunPanel)
        # Passed tests are drawn at most every LIVE_REDRAW_S: wait for the count and the clock.
        await wait_until(
            pilot,
            lambda: "1 done" in panel.summary_line and "of the 120 s limit" in panel.summary_line,
            "the clock",
        )
        assert panel.summary_line.startswith("Running the tests… 1 done, ")
        runner.release.set()


async def test_a_timed_out_run_names_the_tests_it_never_ran(make_app, runner, recorder):
    runner.script(
        "a1",
        Scripted(
            [("test_small", "passed", None)], status=RunStatus.TIMEOUT, message="killed after 120 s"
        ),
    )
    ids = [f"drills/tests/test_a1.py::{name}" for name in ("test_small", "test_tail", "test_2d")]
    app = make_app(list_tests=lambda drill_id, impl: ids)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        panel = drill_screen(app).query_one(RunPanel)
        assert panel.summary_line == "Timed out: 2 of 3 tests never ran"
        assert "Never ran: test_tail, test_2d" in str(panel.query_one("#run-failure").render())
        assert [row.outcome for row in panel.shown.rows.values()] == [
            "passed",
            "not-run",
            "not-run",
        ]


async def test_the_error_map_and_brackets_show_literally(make_app, runner, recorder):
    class MapRunner:
        def run(self, drill_id, impl="mine", *, on_event=None, cancel=None):
            test = r.TestResult(
                "drills/tests/test_a1.py::test_tail",
                "failed",
                "missing-tail-mask",
                "dtype must be one of ['fp32', 'fp64'] [bold]not markup[/bold]",
                where="rows 2 to 3, the last 24 columns",
                error_map=["row 0 ....", "row 2 ..XX"],
            )
            return r.RunResult(
                drill_id, impl, RunStatus.FAILED, tests=[test], diagnoses=[test.diagnosis]
            )

    app = make_app()
    app.services = dataclasses.replace(app.services, runner=MapRunner())
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        shown = shown_text(drill_screen(app).query_one("#run-failure"))
        assert "['fp32', 'fp64'] [bold]not markup[/bold]" in shown and "\\'" not in shown
        assert "Where: rows 2 to 3, the last 24 columns" in shown
        assert "row 2 ..XX" in shown


async def test_the_last_stage_code_renders_as_a_code_block(
    make_app, runner, recorder, small_course
):
    hints = small_course.hints_dir / "a1.yaml"
    hints.write_text(
        hints.read_text().replace(
            "      - Load with mask=offsets < n and store with the same mask.",
            "      - |-\n        Load with a mask:\n\n        # the last block\n"
            "        mask = offsets < n\n        x = tl.load(x_ptr + offsets, mask=mask)",
        )
    )
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        await pilot.press("h", "h")
        await settle(pilot)
        assert "```python\n# the last block\nmask = offsets < n\nx = tl.load(" in hint_text(app)
        from textual.widgets._markdown import MarkdownFence, MarkdownHeader

        markdown = drill_screen(app).query_one("#hint-text")
        assert markdown.query(MarkdownFence) and not markdown.query(MarkdownHeader)


async def test_the_not_started_ladder_never_opens_the_solution(make_app, runner, recorder):
    not_started = Scripted([("test_small", "failed", "not-started")])
    runner.script("a1", not_started)
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        await pilot.press("h", "h", "h")
        await settle(pilot)
        assert "untouched starter" in hint_text(app)
        await pilot.press("s")
        await settle(pilot)
        assert not isinstance(app.screen, SolutionScreen)
        assert "solution opens after your file passes" in recorder.notices()[-1]


@pytest.mark.parametrize(("backend", "said"), [("cpu-interpreter", True), ("cuda", False)])
async def test_bf16_garbage_is_said_to_be_the_cpu_interpreters(make_app, recorder, backend, said):
    class Bf16Runner:
        def run(self, drill_id, impl="mine", *, on_event=None, cancel=None):
            test = r.TestResult(
                "drills/tests/test_a1.py::test_bf16",
                "failed",
                "bf16-no-upcast",
                "y: 290 of 300 values differ; worst at [2, 99]: got 1.2e+26, expected 0.5",
                where="every row, every column",
            )
            return r.RunResult(
                drill_id,
                impl,
                RunStatus.FAILED,
                backend=backend,
                tests=[test],
                diagnoses=[test.diagnosis],
            )

    app = make_app(runner=Bf16Runner())
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await run_and_wait(pilot, recorder)
        shown = shown_text(drill_screen(app).query_one("#run-failure"))
        assert ("These values are the CPU interpreter's" in shown) is said
        if said:  # right under the values, before where they are
            assert shown.index("got 1.2e+26") < shown.index("interpreter's") < shown.index("Where")
