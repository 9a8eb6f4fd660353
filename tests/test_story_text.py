"""The last English a Chinese learner met, now in Chinese: the drill tests' suspect stories and
output names (tutor.course.stories), set-up errors with their file and line, and `tutor bench`.

Each translation of a story is proven the way a learner meets it (a buggy kernel checked with
`--lang zh`), and `tutor dev check` is proven to name a story that lost its translation.
"""

from __future__ import annotations

import json
import re

import pytest
from cli_helpers import padding_where_mutant, tutor

from tutor.course.catalogue import load_catalogue
from tutor.course.stories import StoryTable, read_collected, table_entries
from tutor.course.yamlfile import YamlFileError
from tutor.dev import check as devcheck
from tutor.dev import patches

PADDING_STORY = (
    "the variance with each padded lane's (0 - mean)^2 added in (x - mean not zeroed there)"
)
# Three English words in a row: what a Chinese sentence holds only where English leaked in.
ENGLISH_WORDS = re.compile(r"\b[a-z]{2,} [a-z]{2,} [a-z]{2,}\b")


def test_a_story_is_translated_whole_from_templates_and_their_parts():
    table = StoryTable(
        {
            "a loop over K blocks of {block} whose {which} never move": (
                "按 {block} 分块，{which} 不动"
            ),
            "a_ptrs and b_ptrs": "a_ptrs 和 b_ptrs",
            "the mean divided by BLOCK_N": "均值除以了 BLOCK_N",
        }
    )
    assert table.text("the mean divided by BLOCK_N") == "均值除以了 BLOCK_N"
    assert (
        table.text("a loop over K blocks of 64 whose a_ptrs and b_ptrs never move")
        == "按 64 分块，a_ptrs 和 b_ptrs 不动"
    )
    assert (
        table.text("a loop over K blocks of 64 whose b_ptrs never move")
        == "按 64 分块，b_ptrs 不动"
    )
    # caught text that reads as English the table lacks: not translated, shown as written
    prose = "a loop over K blocks of 64 whose row pointers never move"
    assert table.translate(prose) is None and table.text(prose) == prose and table.lacks(prose)
    assert not table.lacks("rstd")  # an output's name alone needs no translation


def test_a_translation_with_other_placeholders_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "t9.zh.yaml"
    path.write_text('format: 1\nstories:\n  "blocks of {block}": "每块 {blok}"\n', encoding="utf-8")
    with pytest.raises(YamlFileError, match=r"t9.zh.yaml:3: stories: .*\['blok'\].*\['block'\]"):
        table_entries(path)


def test_a_buggy_t3_checked_in_chinese_tells_the_story_in_chinese(course):
    mutant = str(padding_where_mutant(course))

    def check(lang: str):
        return tutor(
            course, "--cpu", "check", "t3", "--impl", mutant, "--json", "--lang", lang, timeout=600
        )

    out = check("zh")
    assert out.returncode == 1, out.stderr
    details = [t["details"] for t in json.loads(out.stdout)["tests"] if t.get("details")]
    told = [d for d in details if d.startswith("你的 ")]
    assert told, details
    assert all("填充位的 (0 - mean)^2" in d for d in told)
    assert not [d for d in told if PADDING_STORY in d or ENGLISH_WORDS.search(d)]
    english = check("en")
    assert any(PADDING_STORY in t.get("details", "") for t in json.loads(english.stdout)["tests"])


def test_a_t4_loop_that_stops_early_shows_its_evidence_in_chinese(course):
    # The test's own evidence (a DrillFailure's details), not a suspect's story: the columns
    # the short loop left wrong, in the drill's stories map.
    mutant = course.root / "loop_bound_mutant.py"
    solution = course.solution("t4_softmax_online.py").read_text()
    mutant.write_text(
        patches.apply(
            solution, (course.mutants("t4") / "loop-bound__both_passes.patch").read_text()
        )
    )
    runs = {
        lang: tutor(
            course,
            "--cpu",
            "check",
            "t4",
            "--impl",
            str(mutant),
            "--json",
            "--lang",
            lang,
            timeout=600,
        )
        for lang in ("en", "zh")
    }
    details = {}
    for lang, out in runs.items():
        assert out.returncode == 1, out.stderr
        details[lang] = {t["id"]: t.get("details", "") for t in json.loads(out.stdout)["tests"]}
    evidence = [i for i, text in details["en"].items() if text.startswith("Columns 0..")]
    assert evidence, details["en"]
    for test_id in evidence:
        en, zh = details["en"][test_id], details["zh"][test_id]
        assert "The loop stops before the last" in en
        assert zh.startswith("第 0..") and "循环在最后那个不完整的块之前就停了" in zh
        assert not ENGLISH_WORDS.search(zh), zh
        assert re.findall(r"\d+", zh) == re.findall(r"\d+", en)  # the same columns and block


def _story_problem(course) -> str:
    catalogue = load_catalogue(course)
    failed = {
        f.subject: f.message
        for f in devcheck.content_findings(catalogue, catalogue.drill("t3"))
        if not f.ok
    }
    return failed.get("stories (zh)", "")


def test_dev_check_names_a_story_without_its_translation(course):
    assert _story_problem(course) == ""
    path = course.hints_dir / "t3.zh.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.lstrip().startswith(f'"{PADDING_STORY}"')]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept), encoding="utf-8")
    problem = _story_problem(course)
    assert problem.startswith("hints/t3.zh.yaml has no translation under 'stories:'")
    assert repr(PADDING_STORY) in problem and "drills/stories/t3.yaml" in problem


def test_dev_check_names_stories_collected_from_an_older_test_file(course):
    test_file = course.test_file("t3_layernorm.py")
    sha, english = read_collected(course.stories("t3"))
    assert PADDING_STORY in english and "rstd" in english
    test_file.write_text(test_file.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    problem = _story_problem(course)
    assert problem.startswith("drills/stories/t3.yaml is stale: drills/tests/test_t3_layernorm.py")
    assert "tutor dev stories t3" in problem


def test_a_collection_on_the_gpu_adds_to_the_cpus_and_an_older_one_is_not_kept(course, monkeypatch):
    from tutor.dev import stories

    gpu_only = "a story the tests tell only on a GPU"
    backends = []

    def collect(test_file, solution, root, mutants=(), gpu=False):
        backends.append(gpu)
        return [gpu_only]

    monkeypatch.setattr(stories, "collect", collect)
    monkeypatch.chdir(course.root)
    _sha, cpu_english = read_collected(course.stories("t3"))
    assert stories.main(["--gpu", "t3"]) == 0
    _sha, english = read_collected(course.stories("t3"))
    assert backends == [True] and set(english) == {*cpu_english, gpu_only}
    # Collected from an older test file, what the file held is dropped, not carried over.
    test_file = course.test_file("t3_layernorm.py")
    test_file.write_text(test_file.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert stories.main(["--gpu", "t3"]) == 0
    assert read_collected(course.stories("t3"))[1] == [gpu_only]


def test_an_unknown_drill_is_a_usage_error_not_a_traceback(course, monkeypatch, capsys):
    from tutor.dev import stories

    monkeypatch.chdir(course.root)
    with pytest.raises(SystemExit) as stopped:
        stories.main(["t9"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "no drill t9 in drills.yaml" in err and "Traceback" not in err


def test_a_broken_catalogue_in_chinese_is_one_line_with_file_and_line(course):
    course.catalogue.write_text("format: 2\ntracks:\n  - {id: T, title: x\n", encoding="utf-8")
    out = tutor(course, "--lang", "zh", "check", "t3")
    assert out.returncode == 2
    assert out.stdout == "" and len(out.stderr.strip().splitlines()) == 1
    assert re.match(r"tutor: \S*drills.yaml:4: 不是合法的 YAML：", out.stderr), out.stderr
    course.catalogue.write_text(
        "format: 2\ntracks:\n  - {id: T, title: x}\ndrills:\n  - {id: t3, track: Q}\n",
        encoding="utf-8",
    )
    out = tutor(course, "check", "t3", "--lang", "zh")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    unknown_track = r"tutor: \S*drills.yaml:5: 练习 't3'：键 'track' 指向了不存在的 track 'Q'"
    assert re.match(unknown_track, out.stderr), out.stderr


def test_bench_on_the_cpu_says_why_in_chinese(course):
    out = tutor(course, "--cpu", "bench", "t3", "--impl", "solutions", "--lang", "zh")
    assert out.returncode == 1, out.stderr
    assert "CPU 上不计时" in out.stdout and "（指定了 --cpu。）" in out.stdout
    assert not ENGLISH_WORDS.search(out.stdout.replace("Triton", "").replace("NVIDIA GPU", ""))
