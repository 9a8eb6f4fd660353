"""The app in Chinese: drawn readably at 80x24 and 140x42, switched at runtime with L or the
command palette, and remembered in .tutor/ for the next start."""

from __future__ import annotations

import pytest
from tui_fakes import failing
from tui_helpers import SIZE, drill_screen, settle, wait_until
from tui_snapshot import assert_snapshot, region_text, screen_text

from tutor.course import language
from tutor.lang import cells, i18n
from tutor.ui.messages import RunFinished
from tutor.ui.widgets.drill_list import DrillList
from tutor.ui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.anyio


@pytest.fixture
def chinese():
    """The app starts in Chinese (as `tutor --lang zh` makes it); English again afterwards."""
    i18n.activate("zh")
    yield
    i18n.activate("en")


def _fits(text: str, width: int) -> None:
    too_wide = [line for line in text.splitlines() if cells.width(line) > width]
    assert not too_wide, too_wide


@pytest.mark.parametrize(("size", "name"), [((80, 24), "zh_80x24"), ((140, 42), "zh_140x42")])
async def test_in_chinese_every_hint_out_reads_at_two_sizes(
    chinese, make_app, runner, recorder, small_course, size, name
):
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the run")
        await settle(pilot)
        await pilot.press("h", "h")
        await settle(pilot)
        screen = drill_screen(app)
        title = screen.query_one("#hint-title")
        # The mistake's title on one line, whole; the stage just revealed from its start.
        assert title.size.height == 1 and title.region.width >= cells.width("尾块读越界了")
        assert "尾块读越界了" in region_text(app, title)
        assert "用 mask=offsets < n 做 load" in region_text(app, screen.query_one("#hint"))
        text = screen_text(app)
        _fits(text, size[0])
        assert "1 讲解" in text and "2 代码" in text
        footer = text.splitlines()[-1]
        assert "? 帮助" in footer and "q 退出" in footer, footer
        assert "CPU 解释器" in text and "监视：关" in text
        assert_snapshot(app, name, small_course.root)


async def test_l_switches_the_language_at_once_and_remembers_it(
    make_app, runner, recorder, small_course
):
    runner.script("a1", failing())
    app = make_app()
    try:
        async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
            await settle(pilot)
            await pilot.press("r")
            await wait_until(pilot, lambda: recorder.of(RunFinished), "the run")
            await settle(pilot)
            screen = drill_screen(app)
            assert "The tail block reads past the end" in region_text(
                app, screen.query_one("#hint")
            )
            await pilot.press("L")
            await settle(pilot)
            text = screen_text(app)
            assert "1 讲解" in text and "向量加法" in text and "基础" in text
            assert "尾块读越界了" in region_text(app, screen.query_one("#hint"))
            assert "两个向量相加" in region_text(app, screen.query_one("#lesson"))
            assert "失败" in region_text(app, screen.query_one("#run"))
            assert "监视：关" in region_text(app, screen.query_one(StatusBar))
            assert "q 退出" in text.splitlines()[-1]
            assert language.remembered(small_course.state_dir) == "zh"
            await pilot.press("question_mark")
            await settle(pilot)
            assert "切换语言" in screen_text(app) and "练习列表中的标记" in screen_text(app)
            await pilot.press("escape", "L")
            await settle(pilot)
            text = screen_text(app)
            assert "1 Lesson" in text and "Vector add" in text and "1 讲解" not in text
            assert screen.query_one(DrillList).catalogue.drill("a1").title == "Vector add"
            assert language.remembered(small_course.state_dir) == "en"
    finally:
        i18n.activate("en")


async def test_the_command_palette_has_the_language_switch(make_app, small_course):
    app = make_app()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = drill_screen(app)
            command = next(
                c for c in app.get_system_commands(screen) if c.title.startswith("Language")
            )
            command.callback()
            await settle(pilot)
            assert i18n.current() == "zh" and "1 讲解" in screen_text(app)
    finally:
        i18n.activate("en")


async def test_a_stale_lesson_shows_the_english_with_the_note(chinese, make_app, small_course):
    lesson = small_course.lesson("a1")
    lesson.write_text(lesson.read_text() + "\nOne more line.\n")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = region_text(app, drill_screen(app).query_one("#lesson"))
        assert "drills/content/a1.zh.md" in shown and "One more line." in shown
        assert "两个向量相加" not in shown


def _in_gbk(path) -> None:
    path.write_bytes(path.read_text(encoding="utf-8").encode("gbk"))


async def test_translations_saved_in_gbk_show_the_english_with_a_note(
    chinese, make_app, runner, recorder, small_course
):
    """As a translator's editor on Windows may save them: the app names the file and says it
    is not UTF-8, and shows the English, instead of dying on the bytes."""
    _in_gbk(small_course.lesson("a1").with_name("a1.zh.md"))
    _in_gbk(small_course.hints("a1").with_name("a1.zh.yaml"))
    runner.script("a1", failing())
    app = make_app()
    async with app.run_test(size=(140, 42), message_hook=recorder) as pilot:
        await settle(pilot)
        screen = drill_screen(app)
        lesson = region_text(app, screen.query_one("#lesson"))
        assert "drills/content/a1.zh.md" in lesson and "UTF-8" in lesson and "GBK" in lesson
        assert "Add two vectors" in lesson
        await pilot.press("r")
        await wait_until(pilot, lambda: recorder.of(RunFinished), "the run")
        await settle(pilot)
        hint = region_text(app, screen.query_one("#hint"))
        assert "hints/a1.zh.yaml" in hint and "GBK" in hint
        assert "The tail block reads past the end" in screen_text(app)


async def test_an_english_lesson_saved_in_gbk_is_named_in_its_place(make_app, small_course):
    lesson = small_course.lesson("a1")
    lesson.write_text(lesson.read_text() + "\n中文的一行。\n", encoding="gbk")
    app = make_app()
    async with app.run_test(size=(140, 42)) as pilot:
        await settle(pilot)
        shown = region_text(app, drill_screen(app).query_one("#lesson"))
        assert "a1.md" in shown and "not UTF-8 (it reads as GBK)" in shown
        await pilot.press("down")  # the app goes on: the next drill's lesson
        await settle(pilot)
        assert "a1.md" not in region_text(app, drill_screen(app).query_one("#lesson"))
