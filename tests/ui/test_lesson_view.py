"""The lesson as a learner reads it: every lesson opens at its top when the drill changes, code
blocks wrap instead of being cut at 80x24, and prose keeps a readable measure on a wide
terminal; with watch off a save still shows in the Code tab, and turning watch on runs it."""

from __future__ import annotations

import pytest
from tui_helpers import drill_screen, settle, wait_until
from tui_snapshot import screen_text

from tutor.ui.messages import RunFinished
from tutor.ui.widgets.code_view import CodeView

pytestmark = pytest.mark.anyio

# t1's formula, the line learners met cut at 80x24 with the list shown.
FORMULA = "gelu_tanh(x) = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))"


def _long_lesson(title: str, paragraphs: int = 30) -> str:
    body = "\n\n".join(
        f"Paragraph {n}: a kernel's programs each own a block of the elements they write."
        for n in range(paragraphs)
    )
    return f"# {title}\n\nYou will write `{title.lower()}`.\n\n{body}\n"


async def test_every_lesson_opens_at_its_top_when_the_drill_changes(make_app, small_course):
    for drill_id, title in (("a1", "Vector add"), ("a2", "Row sums")):
        small_course.lesson(drill_id).write_text(_long_lesson(title), encoding="utf-8")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        scroll = screen.query_one("#lesson-scroll")
        scroll.scroll_end(animate=False)
        await settle(pilot)
        assert scroll.scroll_y > 0
        await pilot.press("down")  # the next drill in the list: a2
        await settle(pilot)
        assert screen.selected == "a2"
        assert scroll.scroll_y == 0
        assert "You will write" in screen_text(app)


async def test_at_80x24_a_lesson_code_block_wraps_instead_of_being_cut(make_app, small_course):
    lesson = f"# GELU\n\nThe tanh form:\n\n    {FORMULA}\n\nThat is all.\n"
    small_course.lesson("a1").write_text(lesson, encoding="utf-8")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "x³)))" in text  # the formula's end, wrapped into view


async def test_at_200x50_lesson_prose_keeps_a_readable_measure(make_app, small_course):
    words = " ".join(["element"] * 80)
    small_course.lesson("a1").write_text(f"# Add\n\n{words}\n", encoding="utf-8")
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        lines = [line for line in screen_text(app).splitlines() if "element element" in line]
        assert lines
        longest = max(len(line.strip().replace("│", "").strip()) for line in lines)
        assert 60 <= longest <= 104


async def test_with_watch_off_a_save_shows_in_the_code_tab_and_watch_on_runs_it(
    make_app, runner, small_course, recorder
):
    mine = small_course.mine("a1_add.py")
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("def add(x, y):\n    return x + y  # FIRST\n")
    app = make_app()  # watch off
    async with app.run_test(size=(100, 30), message_hook=recorder) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        await pilot.press("2")
        await settle(pilot)
        view = screen.query_one(CodeView)
        assert "FIRST" in view.text
        mine.write_text("def add(x, y):\n    return x + y  # SECOND\n")
        await wait_until(pilot, lambda: "SECOND" in view.text, "the saved code on show")
        assert runner.calls == []  # watch off: shown, not run
        await pilot.press("w")
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the run watch on starts")
        assert [call.drill_id for call in runner.calls] == ["a1"]


def test_the_app_breaks_chinese_lines_between_characters_by_the_line_breaking_rules():
    """Rich breaks lines at spaces only: a run of Chinese between two spaces moved whole to the
    next line and left lines half empty. Installed by the app, lines break between characters,
    never before a closing mark, and a date stays whole."""
    import rich._wrap

    from tutor.lang import cells
    from tutor.ui import cjk_wrap

    cjk_wrap.install()
    text = (
        "你的 kernel 把每一行都写到了第零行去了，所以只有最后一个 program 的部分和"
        "（2026-12-05 测得）留了下来。"
    )
    cuts = [0, *rich._wrap.divide_line(text, 20), len(text)]
    lines = [text[a:b].rstrip() for a, b in zip(cuts, cuts[1:], strict=False)]
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(cells.width(line) <= 20 for line in lines)
    assert not any(line[0] in "，。）、" for line in lines)
    assert any("2026-12-05" in line for line in lines)
    assert cells.width(lines[0]) >= 18  # no half-empty line before a run of Chinese
