"""Choosing the language: --lang, $TUTOR_LANG, the app's remembered choice, the locale."""

from __future__ import annotations

import os

import pytest
from cli_helpers import tutor

from tutor.course import language
from tutor.lang import i18n


def test_the_choice_goes_lang_then_env_then_remembered_then_locale(tmp_path):
    def chosen(explicit, env):
        return i18n.choose(explicit, remembered=language.remembered(tmp_path), env=env)

    assert chosen(None, env={}) == "en"
    assert chosen(None, env={"LANG": "zh_CN.UTF-8"}) == "zh"
    # LC_ALL overrides LANG, as in POSIX: a C locale there is English
    assert chosen(None, env={"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}) == "en"
    assert chosen(None, env={"LC_MESSAGES": "zh_TW", "LANG": "en_GB"}) == "zh"
    language.remember(tmp_path, "zh")
    assert chosen(None, env={"LANG": "en_US.UTF-8"}) == "zh"
    assert chosen(None, env={"TUTOR_LANG": "en"}) == "en"
    assert chosen("EN", env={"TUTOR_LANG": "zh"}) == "en"
    (tmp_path / language.REMEMBERED).write_text("klingon\n")  # a broken file is no choice
    assert chosen(None, env={}) == "en"


def test_an_unknown_language_is_refused():
    with pytest.raises(i18n.LanguageError, match="'fr' is not a language"):
        i18n.choose("fr", env={})
    with pytest.raises(i18n.LanguageError, match="TUTOR_LANG 'de'"):
        i18n.choose(None, env={"TUTOR_LANG": "de"})


def test_activate_switches_the_messages_and_what_children_are_told():
    try:
        i18n.activate("zh")
        assert i18n._("All tests pass.") == "全部测试通过。"
        assert i18n.child_env() == {"TUTOR_LANG": "zh"}
        i18n.activate("en")
        assert i18n._("All tests pass.") == "All tests pass."
    finally:
        i18n.activate("en")


def test_an_unknown_lang_on_the_command_line_is_one_line_exit_2(course):
    for args in (["list", "--lang", "fr"], ["--lang", "fr", "list"]):
        out = tutor(course, *args)
        assert out.returncode == 2
        assert out.stderr.strip().count("\n") == 0, out.stderr
        assert "'fr' is not a language the tutor speaks (en, zh)" in out.stderr
    out = tutor(course, "list", env=dict(os.environ, TUTOR_LANG="xx"))
    assert out.returncode == 2 and "TUTOR_LANG 'xx'" in out.stderr


def test_list_in_chinese_shows_the_chinese_titles(course):
    out = tutor(course, "list", "--lang", "zh")
    assert out.returncode == 0, out.stderr
    assert "Triton 基础" in out.stdout and "矩阵乘 · 注意力" in out.stdout
    assert "LayerNorm 与 RMSNorm 前向" in out.stdout
    assert "Triton basics" in tutor(course, "list", "--lang", "en").stdout
    # the locale alone is enough, and the app's remembered choice beats it
    env = dict(os.environ, LANG="zh_CN.UTF-8", LC_ALL="", LC_MESSAGES="")
    env.pop("TUTOR_LANG", None)
    assert "Triton 基础" in tutor(course, "list", env=env).stdout
    language.remember(course.state_dir, "en")
    assert "Triton basics" in tutor(course, "list", env=env).stdout


def test_wrapping_counts_cells_and_breaks_between_chinese_characters():
    import textwrap

    from tutor.lang import cells

    chinese = (
        "位置：7500 个值中有 4959 个错误（66.1%）：3 行中的第 1-2 行，2500 列中的第 0-2499 列。" * 2
    )
    lines = cells.wrap(chinese, 40, "  ")
    assert all(cells.width(line) <= 40 for line in lines) and len(lines) > 3
    assert "".join(line.strip() for line in lines).replace(" ", "") == chinese.replace(" ", "")
    assert not any(line.strip()[0] in "，。：）" for line in lines)  # no line opens on a comma
    english = "The padded lanes load as 0, so they add nothing to sum(x); x - mean is -mean there."
    assert cells.wrap(english, 30) == textwrap.wrap(english, 30)
    assert cells.ljust("中文", 6) == "中文  " and cells.width("中文ab") == 6


@pytest.mark.parametrize("width", range(24, 61))
def test_chinese_lines_keep_the_line_breaking_rules_at_every_width(width):
    """No line starts with closing punctuation, even after a run of several ("x.shape[0]）、"),
    none ends on opening punctuation, and a date or a number stays whole."""
    from tutor.lang import cells

    text = (
        "host 端 wrapper 里的错误通常是形状弄混了（x.shape[-1] 和 x.shape[0]）、少传了参数，"
        "或者把 constexpr 当成了张量。H200 上实测（2026-12-05），M = 4096、N = 2048。"
    )
    lines = [line.strip() for line in cells.wrap(text, width)]
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert not any(line[0] in "，。；：、）！？" for line in lines[1:])
    assert not any(line[-1] in "（「『" for line in lines[:-1])
    assert any("2026-12-05" in line for line in lines)


CODE = "    code_line = that_is_long_and_must_stay_exactly_as_it_is(x, y, z)  # 不换行"


def test_a_lesson_printed_in_the_terminal_is_wrapped_by_the_same_rules():
    """`tutor lesson` printed each source line as it is, and the terminal broke a long Chinese
    line anywhere: inside "2026-12-05", or before "，". Its paragraphs are wrapped now, the
    lines of a Chinese paragraph joined without a space; code and tables stay as they are."""
    from tutor.coach.report import format_lesson
    from tutor.lang import cells

    lesson = (
        "# 标题\n\n"
        "在 NVIDIA H200 上实测（2026-12-05），M = 4096、N = 2048、8 个 warp，CUDA graph 中的 GPU"
        "时间，一个 program 在路上的字节太少，喂不饱一个 SM 的访存通路，\n"
        "所以每个 SM 放第二个。\n\n"
        f"{CODE}\n\n"
        "- 列表项：" + "很长的一句话" * 12 + "\n"
    )
    out = format_lesson(lesson, 40).splitlines()
    assert CODE in out
    prose = [line for line in out if line and not line.startswith(("#", "    code"))]
    assert all(cells.width(line) <= 40 for line in prose)
    assert any("2026-12-05" in line for line in prose)
    assert not any(line.strip()[0] in "，。、" for line in prose if line.strip())
    assert "通路，所以" in "".join(out)  # the source's line break inside Chinese: no space
    item = out.index(next(line for line in out if line.startswith("- 列表项")))
    assert len(out) > item + 1 and all(line.startswith("  ") for line in out[item + 1 :])
