"""The app at 80x24 and 140x42: every panel reachable with Tab, one key to fill the screen with
it, the room going to the run and the hint after a failure, a revealed stage read from its start,
and the run's error map and test ids drawn whole."""

from __future__ import annotations

import pytest
from tui_fakes import failing
from tui_helpers import drill_screen, settle, wait_until
from tui_snapshot import region_text, screen_text

from tutor.run import results as r
from tutor.states import RunStatus
from tutor.ui.messages import RunFinished
from tutor.ui.widgets.hint_panel import HintPanel
from tutor.ui.widgets.run_panel import RunPanel

pytestmark = pytest.mark.anyio

SIZES = pytest.mark.parametrize("size", [(80, 24), (140, 42)], ids=["80x24", "140x42"])
# A stage 3 as long as the course's longest (a kernel's worth of code), under two short ones.
LONG_STAGE = "\n".join(
    ["      - |-", "        Mask the loads and the store with the same offsets:", ""]
    + [f"        line_{n:02d} = tl.load(x_ptr + offsets + {n}, mask=mask)" for n in range(14)]
)


async def _run(pilot, app, recorder) -> None:
    """Press r and wait for the run to end."""
    await settle(pilot)
    await pilot.press("r")
    await wait_until(pilot, lambda: recorder.of(RunFinished), "the run to end")
    await settle(pilot)


def _focus_path(app) -> str:
    """The id of the focused widget, or of the nearest ancestor that has one."""
    node = app.focused
    while node is not None and not node.id:
        node = node.parent
    return node.id if node is not None else ""


@SIZES
async def test_tab_reaches_every_panel_and_comes_back_round(make_app, runner, recorder, size):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await _run(pilot, app, recorder)
        seen = [_focus_path(app)]
        for _ in range(5):
            await pilot.press("tab")
            await settle(pilot)
            seen.append(_focus_path(app))
            assert app.focused.region.area > 0, f"{seen[-1]} has the focus but is not on screen"
        assert seen == ["drills", "tabs", "lesson-scroll", "run", "hint-body", "drills"]
        await pilot.press("shift+tab")
        await settle(pilot)
        assert _focus_path(app) == "hint-body"


@SIZES
@pytest.mark.parametrize(
    ("tabs", "panel", "shows"),
    [(4, HintPanel, "What happens in the last block"), (3, RunPanel, "Failed: 1 of 2 tests")],
    ids=["hint", "run"],
)
async def test_f_fills_the_screen_with_the_focused_panel_and_f_or_esc_puts_it_back(
    make_app, runner, recorder, size, tabs, panel, shows
):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await _run(pilot, app, recorder)
        screen = drill_screen(app)
        widget = screen.query_one(panel)
        before = widget.region
        await pilot.press(*["tab"] * tabs)
        for back in ("f", "escape"):
            await pilot.press("f")
            await settle(pilot)
            assert screen.maximized is widget
            width, height = size
            # The whole screen but the status bar and the footer of keys.
            assert (widget.region.width, widget.region.height) == (width, height - 2)
            text = screen_text(app)
            assert shows in text and "q Quit" in text.splitlines()[-1]
            await pilot.press(back)
            await settle(pilot)
            assert screen.maximized is None and widget.region == before
            await pilot.press("escape")  # nothing filled: Esc does nothing
            await settle(pilot)


async def test_f_on_the_lesson_fills_the_screen_with_the_tabs_and_on_the_list_says_how(
    make_app, recorder
):
    app = make_app()
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        await pilot.press("f")
        await settle(pilot)
        assert screen.maximized is None
        assert "Press Tab to move to the lesson" in recorder.notices()[-1]
        await pilot.press("tab", "tab", "f")
        await settle(pilot)
        assert screen.maximized is screen.query_one("#tabs")
        assert "Add two vectors" in screen_text(app)


@SIZES
async def test_after_a_failure_the_run_and_the_hint_get_the_room(make_app, runner, recorder, size):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        lesson = screen.query_one("#lesson-scroll")
        hint = screen.query_one("#hint-body")
        before = lesson.region.height, hint.region.height
        assert before[0] > before[1]  # nothing to coach yet: the lesson has the room
        await _run(pilot, app, recorder)
        run = screen.query_one(RunPanel)
        # At 80x24 the run shows its summary, the failing test and its message; the hint its
        # title's first stage whole.
        assert run.region.height >= 6 and hint.region.height >= 5
        assert lesson.region.height < before[0] and hint.region.height > before[1]
        assert "y: 3 of 300 values differ" in region_text(app, run)
        hint_words = region_text(app, screen.query_one(HintPanel))
        assert "What happens in the last block when n is not a multiple of BLOCK?" in hint_words


@SIZES
async def test_a_revealed_stage_is_shown_from_its_start(
    make_app, runner, recorder, small_course, size
):
    hints = small_course.hints_dir / "a1.yaml"
    hints.write_text(
        hints.read_text().replace(
            "      - Load with mask=offsets < n and store with the same mask.", LONG_STAGE
        )
    )
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await _run(pilot, app, recorder)
        for first_line in ("The offsets of the last program", "Mask the loads and the store"):
            await pilot.press("h")
            await settle(pilot)
            await pilot.pause(0.1)
            await settle(pilot)
            assert first_line in screen_text(app), f"{first_line!r} is scrolled out of view"
        await pilot.press("tab", "tab", "tab", "tab", "f")  # filled, the stage reads whole
        await settle(pilot)
        text = screen_text(app)
        assert "line_00" in text and ("line_13" in text or size[1] < 30)


@SIZES
async def test_the_error_map_is_drawn_to_the_panels_width(make_app, recorder, size):
    import torch

    from tutor.harness.errormap import MAX_COLS, locate

    wrong = torch.zeros(4, 1000, dtype=torch.bool)
    wrong[:, 990:] = True  # the last column block of every row
    picture = list(locate(wrong).picture)
    assert len(picture[1]) == MAX_COLS  # 64 cells across: wider than the run panel at 140x42

    class MapRunner:
        def run(self, drill_id, impl="mine", *, on_event=None, cancel=None):
            test = r.TestResult(
                "drills/tests/test_a1.py::test_tail[4x1000]",
                "failed",
                "missing-tail-mask",
                "y: 40 of 4000 values differ",
                where="every row, columns 990-999 of 1000",
                error_map=picture,
            )
            return r.RunResult(
                drill_id, impl, RunStatus.FAILED, tests=[test], diagnoses=[test.diagnosis]
            )

    app = make_app(runner=MapRunner())
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await _run(pilot, app, recorder)
        panel = drill_screen(app).query_one(RunPanel)
        if size[1] < 30:  # 80x24 shows the map's first rows; filled, the run shows it whole
            await pilot.press("tab", "tab", "tab", "f")
            await settle(pilot)
        left, right = panel.content_region.x, panel.content_region.right
        rows = [
            line[left:right].strip()
            for line in screen_text(app).splitlines()
            if line[left:right].strip() and set(line[left:right].strip()) <= set(".X")
        ]
        assert len(rows) == 4, rows  # one line per row of the output, none split in two
        assert all(row.endswith("X") and row.startswith("....") for row in rows)
        assert len(set(rows)) == 1 and len(rows[0]) <= panel.content_region.width


async def test_the_test_table_keeps_parameter_ids(make_app, recorder):
    layouts = ["unit-k", "a-transposed", "a-transposed-b-contiguous", "a-sliced-b-transposed"]

    class StridedRunner:
        def run(self, drill_id, impl="mine", *, on_event=None, cancel=None):
            tests = [
                r.TestResult(f"drills/tests/test_m1.py::test_matmul_strided[{layout}]", "failed")
                for layout in layouts
            ]
            return r.RunResult(drill_id, impl, RunStatus.FAILED, tests=tests)

    app = make_app(runner=StridedRunner())
    async with app.run_test(size=(140, 42), message_hook=recorder) as pilot:
        await _run(pilot, app, recorder)
        # A name longer than the column folds onto a second line; it is never cut short.
        text = region_text(app, drill_screen(app).query_one(RunPanel)).replace(" ", "")
        for layout in layouts:
            assert f"✗failtest_matmul_strided[{layout}]" in text


async def test_the_help_says_how_to_close_it_at_80x24(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert "Esc or ? closes this" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot)
        assert "Esc or ? closes this" not in screen_text(app)


async def test_at_80x24_code_lines_wrap_and_the_solution_files_stack(
    make_app, runner, recorder, small_course
):
    long_line = "    y = x + 1  # " + "a comment that runs past the edge of the view, " * 3
    small_course.mine("a1_add.py").parent.mkdir(parents=True, exist_ok=True)
    small_course.mine("a1_add.py").write_text(f"def add(x):\n{long_line}THE_END\n")
    app = make_app()
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        assert "THE_END" in screen_text(app)  # the line's end, wrapped into view
        await _run(pilot, app, recorder)  # a pass opens the solution
        await pilot.press("s")
        await settle(pilot)
        mine = app.screen.query_one("#solution-mine")
        reference = app.screen.query_one("#solution-reference")
        assert mine.region.width >= 76 and reference.region.width >= 76
        assert reference.region.y > mine.region.y
