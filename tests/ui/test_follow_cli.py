"""The app follows .tutor/progress.json: what the real `tutor reset` and `tutor hint` write while
the app is open shows in the app, as `tutor list` and `tutor progress` show it."""

from __future__ import annotations

import asyncio
import json

import pytest
from cli_helpers import tutor
from tui_fakes import Scripted, failing
from tui_helpers import SIZE, drill_screen, settle, wait_until

from tutor.ui import marks
from tutor.ui.messages import RunFinished
from tutor.ui.widgets.drill_list import DrillList
from tutor.ui.widgets.hint_panel import HintPanel
from tutor.ui.widgets.run_panel import RunPanel

pytestmark = pytest.mark.anyio

STAGE_2 = "The offsets of the last program run past n"


async def _cli(course, *args: str) -> str:
    """`tutor ARGS` in its own process, while the app goes on running."""
    done = await asyncio.to_thread(tutor, course, *args, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_tutor_reset_beside_the_app_shows_as_reset_and_runs_nothing(
    make_app, runner, recorder, small_course
):
    runner.script("a1", Scripted())
    app = make_app(watch=True, watch_debounce_ms=200, watch_step_ms=50)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the passing run")
        screen = drill_screen(app)
        drills, panel = screen.query_one(DrillList), screen.query_one(RunPanel)
        await wait_until(pilot, lambda: drills.marks["a1"] == marks.PASSED_CLEAN, "the star")
        small_course.mine("a1_add.py").write_text("def add(x):\n    return x  # mine\n")
        await wait_until(pilot, lambda: len(runner.calls) >= 2, "the save's run")
        # The copy of the starter that r made is a change as well: on a busy machine its event
        # can be read after this save, and run the saved file a second time. Whatever ran, the
        # count is taken once every event has come and no run is left.
        await pilot.pause(0.6)
        await wait_until(pilot, lambda: not screen.session.running("a1"), "the save's runs")
        runs = len(runner.calls)

        await _cli(small_course, "reset", "a1")
        await wait_until(pilot, lambda: panel.summary_line.startswith("No run yet"), "the reset")
        await pilot.pause(0.6)  # the watcher saw the starter come back: it must not run it
        await settle(pilot)
        assert len(runner.calls) == runs
        assert drills.marks["a1"] == marks.PASSED_CLEAN  # passed before: never "!"
        assert "You passed this drill before; your file is the starter again" in (
            screen.query_one(HintPanel).markdown
        )
        listed = next(
            line for line in (await _cli(small_course, "list")).splitlines() if "a1" in line
        )
        assert "passed before, reset" in listed


async def test_tutor_hint_beside_the_app_shows_the_stage_at_once(
    make_app, runner, recorder, small_course
):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the failing run")
        hint = drill_screen(app).query_one(HintPanel)
        assert STAGE_2 not in hint.markdown

        printed = await _cli(small_course, "hint", "a1")
        assert STAGE_2 in printed
        await wait_until(pilot, lambda: STAGE_2 in hint.markdown, "the CLI's stage in the app")
        progress = json.loads(await _cli(small_course, "progress", "--json"))
        assert progress["drills"]["a1"]["hints"] == {"missing-tail-mask": 2}

        await pilot.press("h")  # the next stage is the third, not the CLI's second again
        await settle(pilot)
        assert "Load with mask=offsets < n" in hint.markdown
        progress = json.loads(await _cli(small_course, "progress", "--json"))
        assert progress["drills"]["a1"]["hints"] == {"missing-tail-mask": 3}
