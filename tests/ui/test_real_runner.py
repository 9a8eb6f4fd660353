"""The app with the real runner on a copy of the course: a hang and a crash show as such.

The learner's T3 file is swapped for a kernel that never ends, then for one that kills its
process; the app must stay responsive meanwhile and name each ending in the run panel.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tui_helpers import SIZE, drill_screen, settle, wait_until

from tutor.course.catalogue import load_catalogue
from tutor.course.progress import ProgressStore
from tutor.run.runner import Runner
from tutor.states import RunStatus
from tutor.ui.app import TutorApp
from tutor.ui.messages import RunFinished
from tutor.ui.widgets.drill_list import DrillList
from tutor.ui.widgets.run_panel import RunPanel

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HANG_LIMIT = 3  # seconds of spinning: the limit counts from the first test, not from imports


async def test_a_hang_and_a_crash_with_the_real_runner(course, recorder):
    def runner(catalogue, force_cpu):
        return Runner(catalogue, force_cpu=force_cpu, timeout=HANG_LIMIT)

    app = TutorApp(
        load_catalogue(course),
        ProgressStore(course.progress_file),
        runner,
        force_cpu=True,
        watch=False,
    )
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        screen.query_one(DrillList).select_drill("t3")
        await wait_until(pilot, lambda: screen.selected == "t3", "t3 to be selected")
        course.mine("t3_layernorm.py").parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / "t3_hangs.py", course.mine("t3_layernorm.py"))
        await pilot.press("r")
        await pilot.press("w")
        # The app answers while the kernel spins: read at once, since on a busy machine the
        # 3 s limit can run out while the screen settles.
        answered_while_spinning = screen.watching and not recorder.of(RunFinished)
        await settle(pilot)
        assert answered_while_spinning
        await wait_until(
            pilot,
            lambda: recorder.of(RunFinished),
            "the hang to be killed",
            timeout=HANG_LIMIT + 60,
        )
        await settle(pilot)
        panel = screen.query_one(RunPanel)
        assert recorder.of(RunFinished)[0].result.status == RunStatus.TIMEOUT
        assert panel.summary_line == "Timed out: the tests were stopped"
        assert f"killed after {HANG_LIMIT} s" in str(panel.query_one("#run-failure").render())

        await pilot.press("w")  # watch off again: this run is started by hand
        shutil.copyfile(FIXTURES / "t3_segfaults.py", course.mine("t3_layernorm.py"))
        await pilot.press("r")
        await wait_until(
            pilot, lambda: len(recorder.of(RunFinished)) == 2, "the crash", timeout=HANG_LIMIT + 60
        )
        await settle(pilot)
        assert recorder.of(RunFinished)[1].result.status == RunStatus.CRASHED
        assert panel.summary_line == "Crashed: the test process died"
        assert "the test process died" in str(panel.query_one("#run-failure").render())
