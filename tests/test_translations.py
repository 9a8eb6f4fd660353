"""Lessons and hints in Chinese when fresh, the English with a note when not, and `tutor dev
check` naming what is stale, missing or shaped unlike the English."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import padding_where_mutant, tutor
from translated import LESSON_LINE, translate_drill

from tutor.course.catalogue import CatalogueError, load_catalogue
from tutor.course.hints import HintBook
from tutor.course.paths import CoursePaths
from tutor.course.titles import localized
from tutor.dev import check as devcheck
from tutor.dev.translations import course_findings, drill_findings

ZH = dict(os.environ, TUTOR_LANG="zh")


def _cjk_share(text: str) -> float:
    cjk = sum("\u4e00" <= c <= "\u9fff" for c in text)
    latin = sum(c.isascii() and c.isalpha() for c in text)
    return cjk / max(1, cjk + latin)


def _edit_one_line(path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].rstrip("\n") + " (edited)\n"
    path.write_text("".join(lines), encoding="utf-8")


def test_tutor_lang_zh_prints_the_chinese_lesson(course):
    translate_drill(course, "t3")
    out = tutor(course, "lesson", "t3", env=ZH)
    assert out.returncode == 0, out.stderr
    assert LESSON_LINE in out.stdout and "source_sha256" not in out.stdout
    assert "答案" in out.stdout and "除以 N" not in out.stdout  # the answer stays folded
    assert _cjk_share(out.stdout) > 0.5
    english = tutor(course, "lesson", "t3", "--lang", "en").stdout
    assert LESSON_LINE not in english and english.startswith("# T3")


def test_an_edited_english_lesson_shows_the_english_with_a_note(course):
    translate_drill(course, "t3")
    _edit_one_line(course.lesson("t3"))
    out = tutor(course, "lesson", "t3", "--lang", "zh")
    assert out.returncode == 0, out.stderr
    note, rest = out.stdout.split("\n", 1)
    assert "drills/content/t3.md" in note and "drills/content/t3.zh.md" in note
    assert _cjk_share(note) > 0.3  # said in the chosen language
    assert LESSON_LINE not in rest and "(edited)" in rest


def test_a_missing_translation_shows_the_english_with_a_note(course):
    out = tutor(course, "lesson", "t3", "--lang", "zh")
    if course.lesson("t3").with_name("t3.zh.md").exists():
        course.lesson("t3").with_name("t3.zh.md").unlink()
        out = tutor(course, "lesson", "t3", "--lang", "zh")
    assert out.returncode == 0
    assert "drills/content/t3.zh.md" in out.stdout.splitlines()[0]


def test_dev_check_names_a_stale_lesson_and_hints_file(course):
    translate_drill(course, "t3")
    catalogue = load_catalogue(course)
    zh = [
        f
        for f in devcheck.content_findings(catalogue, catalogue.drill("t3"))
        if "(zh)" in f.subject
    ]
    assert {f.subject for f in zh} == {
        "lesson (zh)",
        "hints (zh)",
        "ladders (zh)",
        "title (zh)",
        "stories (zh)",
    }
    assert all(f.ok for f in zh), [f.line() for f in zh if not f.ok]
    _edit_one_line(course.lesson("t3"))
    _edit_one_line(course.hints("t3"))
    failed = {
        f.subject: f.message
        for f in devcheck.content_findings(catalogue, catalogue.drill("t3"))
        if not f.ok
    }
    assert failed["lesson (zh)"] == (
        "drills/content/t3.zh.md is stale: drills/content/t3.md changed since it was "
        "translated (docs/AUTHORING.md says how to refresh it)"
    )
    assert failed["hints (zh)"].startswith("hints/t3.zh.yaml is stale: hints/t3.yaml changed")
    assert set(failed) == {"lesson (zh)", "hints (zh)"}


def test_dev_check_on_the_command_line_fails_naming_the_stale_file(course):
    # t0: the drill with the fewest and quickest files to run (every drill's translations are
    # checked the same way).
    translate_drill(course, "t0")
    _edit_one_line(course.lesson("t0"))
    out = tutor(course, "dev", "check", "t0", "--cpu", "--json", timeout=600)
    assert out.returncode == 1
    failed = [f for f in json.loads(out.stdout)["findings"] if not f["ok"]]
    assert [f["message"].split(":")[0] for f in failed] == ["drills/content/t0.zh.md is stale"]


def test_dev_check_wants_translations_unless_the_entry_says_english_first(course):
    catalogue = load_catalogue(course)
    for name in ("t3.zh.md",):
        (course.lesson("t3").parent / name).unlink(missing_ok=True)
    course.hints("t3").with_name("t3.zh.yaml").unlink(missing_ok=True)
    failed = {
        f.subject: f.message
        for f in devcheck.content_findings(catalogue, catalogue.drill("t3"))
        if not f.ok
    }
    assert failed["lesson (zh)"].startswith("drills/content/t3.zh.md is missing")
    assert "translations: [en]" in failed["hints (zh)"]
    text = course.catalogue.read_text(encoding="utf-8")
    course.catalogue.write_text(
        text.replace(
            "    file: t3_layernorm.py\n", "    file: t3_layernorm.py\n    translations: [en]\n"
        )
    )
    catalogue = load_catalogue(course)
    assert catalogue.drill("t3").translations == ("en",)
    assert not [
        f
        for f in devcheck.content_findings(catalogue, catalogue.drill("t3"))
        if "(zh)" in f.subject
    ]


def test_translations_must_list_english_and_known_languages(course):
    text = course.catalogue.read_text(encoding="utf-8")
    course.catalogue.write_text(
        text.replace(
            "    file: t3_layernorm.py\n", "    file: t3_layernorm.py\n    translations: [zh]\n"
        )
    )
    with pytest.raises(CatalogueError, match=r"drills.yaml:\d+: drill 't3': key 'translations'"):
        load_catalogue(course)


def test_ladders_must_have_the_english_ids_stages_and_patterns(course):
    translate_drill(course, "t3")
    path = course.hints("t3").with_name("t3.zh.yaml")
    text = path.read_text(encoding="utf-8")
    # one stage less for padding-where, and a ladder the English has not
    lines = text.splitlines(keepends=True)
    start = lines.index("  padding-where:\n")
    stage = next(n for n in range(start, len(lines)) if lines[n].startswith("    - "))
    del lines[stage]
    lines.append("  made-up:\n    title: 中文\n    stages: [一, 二, 三]\n")
    path.write_text("".join(lines), encoding="utf-8")
    catalogue = load_catalogue(course)
    failed = {
        f.subject: f.message
        for f in devcheck.content_findings(catalogue, catalogue.drill("t3"))
        if not f.ok
    }
    assert (
        "hints/t3.zh.yaml: 'padding-where' has 2 stages, hints/t3.yaml 3" in failed["ladders (zh)"]
    )
    assert "does not: made-up" in failed["ladders (zh)"]


def test_common_ladders_must_match_too(course):
    translate_drill(course, "t3")
    path = course.hints_dir / "common.zh.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  mismatch:\n", "  mismatch-renamed:\n"), encoding="utf-8")
    catalogue = load_catalogue(course)
    findings = devcheck.check_course(catalogue, ["t3"], runner=_NoRuns())
    failed = {f.subject: f.message for f in findings if not f.ok and f.drill == "course"}
    assert "hints/common.zh.yaml has no ladder for mismatch" in failed["common ladders (zh)"]


class _NoRuns:
    """A runner that runs nothing: the content rules alone are under test."""

    force_cpu = runs_on_cpu = True

    def run_batch(self, drill_id, impls, cancel=None):
        return {}

    def run(self, drill_id, impl="mine", *, on_event=None, cancel=None):
        return None


def test_hints_in_chinese_when_fresh_and_english_with_a_note_when_stale(course):
    translate_drill(course, "t3")
    book = HintBook(course.hints_dir, "t3", "zh")
    assert book.title("padding-where") == "中文标题 padding-where"
    assert book.title("missing-mask") == "中文标题 missing-mask"  # from common.zh.yaml
    assert book.note == ""
    _edit_one_line(course.hints("t3"))
    book = HintBook(course.hints_dir, "t3", "zh")
    assert book.title("padding-where") == "Padded lanes enter the variance (or the mean of squares)"
    assert book.title("missing-mask") == "中文标题 missing-mask"  # common is still fresh
    assert "hints/t3.zh.yaml" in book.note and "hints/t3.yaml" in book.note
    assert HintBook(course.hints_dir, "t3", "en").title("missing-mask") != "中文标题 missing-mask"


def test_titles_file_errors_name_the_file_and_line(course):
    path = course.root / "drills.zh.yaml"
    path.write_text("format: 1\ndrills:\n  t3: {title: 一}\n  t99: {title: 二}\n", encoding="utf-8")
    catalogue = load_catalogue(course)
    with pytest.raises(
        CatalogueError, match=r"drills.zh.yaml:\d+: drills: 't99' is not in drills.yaml"
    ):
        localized(catalogue, "zh")
    path.write_text("format: 1\ndrills:\n  t3: {title: 一, colour: 二}\n", encoding="utf-8")
    with pytest.raises(
        CatalogueError, match=r"drills.zh.yaml:3: drills: 't3' maps title and taught"
    ):
        localized(catalogue, "zh")
    out = tutor(course, "list", "--lang", "zh")
    assert out.returncode == 2 and "drills.zh.yaml:3" in out.stderr


def test_check_in_chinese_prints_the_diagnosis_title_and_first_hint(course):
    translate_drill(course, "t3")
    buggy = padding_where_mutant(course)
    out = tutor(course, "check", "t3", "--impl", str(buggy), "--cpu", "--lang", "zh")
    assert out.returncode == 1, out.stderr
    assert "诊断：中文标题 padding-where（padding-where）" in out.stdout
    assert "中文第 1 步" in out.stdout and "中文第 2 步" not in out.stdout
    # the words around them too, from the parent (summary) and from the run's child (where)
    assert "诊断：" in out.stdout and "个通过" in out.stdout
    assert "位置：" in out.stdout and "个错误" in out.stdout
    english = tutor(course, "check", "t3", "--impl", str(buggy), "--cpu", "--json", "--lang", "en")
    chinese = tutor(course, "check", "t3", "--impl", str(buggy), "--cpu", "--json", "--lang", "zh")
    en, zh = json.loads(english.stdout), json.loads(chinese.stdout)
    assert en["diagnoses"] == zh["diagnoses"] and en["status"] == zh["status"]
    assert [t["id"] for t in en["tests"]] == [t["id"] for t in zh["tests"]]
    assert [t["diagnosis"] for t in en["tests"]] == [t["diagnosis"] for t in zh["tests"]]


def test_every_translation_in_the_course_is_fresh():
    """The course as committed: every lesson, hints file, ladder and title in every language
    matches the English it was translated from (a change to hints/common.yaml once went out
    without its Chinese, and only `tutor dev check` said so)."""
    catalogue = load_catalogue(CoursePaths(Path(__file__).resolve().parents[1]))
    findings = course_findings(catalogue, catalogue.drills)
    for drill in catalogue.drills:
        findings += drill_findings(catalogue, drill)
    assert len(findings) > 2 * len(catalogue.drills)  # every drill is translated
    assert [message for _, ok, message in findings if not ok] == []


def test_dev_check_holds_the_chinese_to_one_term_for_one_thing(tmp_path):
    """The glossary (tutor/lang/glossary.yaml) names one Chinese term for each English one:
    a rendering it avoids in a lesson's or a ladder's prose fails dev check, naming the file;
    in code, an identifier, or glossed after the term, it is no rendering."""
    from tutor.dev import glossary

    terms = glossary.terms()
    lesson = tmp_path / "t9.zh.md"
    lesson.write_text(
        "每个 padding 位都是 0。\n\n按行步长（stride）读，`x.stride(0)` 不算。\n\n"
        "    row_stride = x.stride(0)  # 代码里的 stride 不算\n",
        encoding="utf-8",
    )
    said = glossary.problems(glossary.lesson_prose(lesson), terms)
    assert len(said) == 1 and "'padding 位' where the glossary says '填充位'" in said[0]
    hints = tmp_path / "t9.zh.yaml"
    hints.write_text(
        "format: 1\ndiagnoses:\n  m:\n    title: 标题\n    stages:\n"
        "      - 两个张量的 stride 不同。\n      - 第二步。\n      - |-\n"
        "            offset = row * stride  # 代码\n"
        'stories:\n  "rows read N apart: the stride is not N": "行距不是 N"\n',
        encoding="utf-8",
    )
    subject, ok, message = glossary.finding(
        "glossary (zh hints)", "t9.zh.yaml", glossary.problems(glossary.hints_prose(hints), terms)
    )
    assert not ok and message.count("'stride' where the glossary says '步长'") == 1


def test_the_course_keeps_to_the_glossary(catalogue):
    from tutor.dev import glossary

    root = catalogue.paths.root
    problems = glossary.course_findings(catalogue.paths.hints_dir / "common.zh.yaml", root)
    for drill in catalogue.drills:
        problems += glossary.drill_findings(
            catalogue.paths.root / "drills" / "content" / f"{drill.id}.zh.md",
            catalogue.paths.hints_dir / f"{drill.id}.zh.yaml",
            root,
        )
    assert [message for _subject, ok, message in problems if not ok] == []
