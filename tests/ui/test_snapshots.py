"""Snapshots of the main screens, drawn from the fixture course at 110×34 (see tui_snapshot)."""

from __future__ import annotations

import shutil

import pytest
from recorded import ROOT, entry, recorded_report
from tui_fakes import Scripted, failing
from tui_helpers import SIZE, drill_screen, settle, wait_until
from tui_snapshot import assert_snapshot, region_text, screen_text

from tutor.states import RunStatus
from tutor.ui.messages import BenchFinished, RunFinished

pytestmark = pytest.mark.anyio


async def _run(pilot, recorder, count: int = 1) -> None:
    await pilot.press("r")
    await wait_until(pilot, lambda: len(recorder.of(RunFinished)) >= count, "the run")
    await settle(pilot)


async def test_snapshot_start(make_app, small_course):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert_snapshot(app, "start", small_course.root)


async def test_snapshot_failing_run_with_first_hint(make_app, runner, recorder, small_course):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await _run(pilot, recorder)
        assert_snapshot(app, "failing_run", small_course.root)


async def test_snapshot_every_hint_out(make_app, runner, recorder, small_course):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await _run(pilot, recorder)
        await pilot.press("h", "h")
        await settle(pilot)
        assert_snapshot(app, "every_hint_out", small_course.root)


async def test_snapshot_passed(make_app, runner, recorder, small_course):
    runner.script(
        "a1", Scripted([("test_small", "passed", None), ("test_tail[1000]", "passed", None)])
    )
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await _run(pilot, recorder)
        assert_snapshot(app, "passed", small_course.root)


async def test_snapshot_timeout(make_app, runner, recorder, small_course):
    runner.script(
        "a1",
        Scripted(
            [("test_small", "passed", None)],
            status=RunStatus.TIMEOUT,
            message="killed after 120 s while running test_loop: a kernel "
            "that never finishes, or a very slow one",
        ),
    )
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await _run(pilot, recorder)
        assert_snapshot(app, "timeout", small_course.root)


async def test_snapshot_code_tab(make_app, small_course):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        drill_screen(app).query_one("#tabs").active = "code-tab"
        await settle(pilot)
        assert_snapshot(app, "code_tab", small_course.root)


@pytest.mark.parametrize(("key", "name"), [("question_mark", "help"), ("x", "confirm_reset")])
async def test_snapshot_modal_screens(make_app, small_course, key, name):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)
        assert_snapshot(app, name, small_course.root)


async def test_snapshot_solution(make_app, runner, recorder, small_course):
    runner.script("a1", Scripted())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await _run(pilot, recorder)
        await pilot.press("s")
        await settle(pilot)
        assert_snapshot(app, "solution", small_course.root)


@pytest.mark.parametrize(("size", "name"), [((80, 24), "narrow_80x24"), ((140, 42), "wide_140x42")])
async def test_snapshot_every_hint_out_at_two_sizes(
    make_app, runner, recorder, small_course, size, name
):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await settle(pilot)
        await _run(pilot, recorder)
        await pilot.press("h", "h")
        await settle(pilot)
        screen = drill_screen(app)
        title = screen.query_one("#hint-title")
        assert title.size.height == 1 and title.region.width >= len("The tail block reads")
        # The stage just revealed, from its first words.
        assert "Load with mask=offsets < n" in region_text(app, screen.query_one("#hint"))
        assert_snapshot(app, name, small_course.root)
        footer_line = screen_text(app).splitlines()[-1]
        assert "? Help" in footer_line and "q Quit" in footer_line


async def test_snapshot_bench_coach_80x24(make_app, recorder, small_course):
    # A bench recorded on the H200: t2's kernel with one warp per 8192-column row, which spills.
    shutil.copyfile(ROOT / "hints" / "common.yaml", small_course.hints_dir / "common.yaml")
    report = recorded_report(
        entry("t2", "perf-spills__one_warp.patch"), ROOT / "drills" / "bench" / "t2.py"
    )

    def recorded_bench(catalogue, drill_id, impl, **kwargs):
        report.drill = drill_id
        return report

    app = make_app(force_cpu=False, gpu_probe=lambda: "NVIDIA H200", bench=recorded_bench)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        screen = drill_screen(app)
        await wait_until(pilot, lambda: screen.on_gpu, "the GPU probe")
        await pilot.press("b")
        await wait_until(pilot, lambda: recorder.of(BenchFinished), "the bench")
        await pilot.press("tab", "f")  # from the list to the tabs, then fill the screen
        await settle(pilot)
        assert_snapshot(app, "bench_coach_80x24", small_course.root)
