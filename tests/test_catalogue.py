"""drills.yaml is read into typed records; a broken file says where and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course.catalogue import CatalogueError, Mistake, load_catalogue
from tutor.course.paths import CoursePaths


def test_every_playable_drill_has_its_files(catalogue):
    paths = catalogue.paths
    for drill in catalogue.drills:
        if drill.coming:
            continue
        for path in (
            paths.starter(drill.file),
            paths.solution(drill.file),
            paths.test_file(drill.file),
            paths.lesson(drill.id),
            paths.hints(drill.id),
        ):
            assert path.is_file(), f"{drill.id}: {path} is missing"


def _write(tmp_path: Path, text: str) -> CoursePaths:
    (tmp_path / "drills.yaml").write_text(text)
    return CoursePaths(tmp_path)


GOOD = """\
format: 2
tracks:
  - {id: T, title: Basics}
drills:
  - id: a1
    track: T
    title: A
    file: a1.py
    functions: [f]
"""

WITH_MISTAKES = (
    GOOD
    + """\
    mistakes:
      - {id: off-by-one, summary: "the last element, skipped"}
      - id: wrong-sign
        summary: the result negated
    bench:
      - {function: f, shape: {n: 64, causal: 0}}
"""
)


def test_minimal_catalogue_gets_defaults(tmp_path):
    cat = load_catalogue(_write(tmp_path, GOOD))
    assert cat.drill("a1").coming is False
    assert cat.drill("a1").bench == ()
    assert cat.drill("a1").mistakes == ()
    with pytest.raises(KeyError, match="no drill 'zz'"):
        cat.drill("zz")


def test_a_drill_declares_its_core_torch_operations(tmp_path):
    text = GOOD.replace("functions: [f]\n", "functions: [f]\n    torch_core: [matmul, linear]\n")
    assert load_catalogue(_write(tmp_path, text)).drill("a1").torch_core == ("matmul", "linear")
    assert load_catalogue(_write(tmp_path, GOOD)).drill("a1").torch_core == ()


def test_a_drill_declares_its_mistakes(tmp_path):
    drill = load_catalogue(_write(tmp_path, WITH_MISTAKES)).drill("a1")
    assert drill.mistakes == (
        Mistake("off-by-one", "the last element, skipped"),
        Mistake("wrong-sign", "the result negated"),
    )
    assert drill.mistake_ids == ("off-by-one", "wrong-sign")
    assert drill.bench[0].shape == {"n": 64, "causal": 0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace("functions: [f]", "functions: [f"), r"drills\.yaml:\d+: not valid YAML"),
        (GOOD.replace("    file: a1.py\n", ""), r"drills\.yaml:5: drill 'a1': missing key 'file'"),
        (
            GOOD.replace("track: T\n", "track: Q\n"),
            r"drill 'a1': key 'track' names unknown track 'Q'",
        ),
        (GOOD.replace("format: 2", "format: 9"), r"format 9 is not supported"),
        (
            GOOD.replace("format: 2", "format: 1"),
            r"format 1 is not supported \(this tutor reads 2\)",
        ),
        (
            WITH_MISTAKES.replace("summary: the result negated", "what: negated"),
            r"drills\.yaml:12: drill 'a1' mistake 'wrong-sign': missing key 'summary'",
        ),
        (
            WITH_MISTAKES.replace("id: wrong-sign", "id: off-by-one"),
            r"drill 'a1': a mistake is listed twice",
        ),
        (
            WITH_MISTAKES.replace("id: wrong-sign", "id: Wrong Sign"),
            r"mistake id 'Wrong Sign' must be lower-case",
        ),
        (WITH_MISTAKES.replace("causal: 0", "causal: -1"), r"non-negative integers"),
        (
            GOOD.replace("functions: [f]", "functions: f"),
            r"drill 'a1': key 'functions' must be list",
        ),
        (GOOD + "    colour: red\n", r"drill 'a1': unknown key 'colour'"),
        (
            GOOD + "    torch_core: matmul\n",
            r"drills\.yaml:5: drill 'a1': key 'torch_core' must be list",
        ),
        (
            GOOD + "    torch_core: [torch.matmul]\n",
            r"drills\.yaml:5: drill 'a1': key 'torch_core' must list torch operation names",
        ),
        (GOOD + "    torch_core: [mm, mm]\n", r"an operation is listed twice in 'torch_core'"),
        (GOOD + "    bench: [{function: g, shape: {n: 4}}]\n", r"bench function 'g' is not in"),
    ],
)
def test_broken_catalogue_names_file_line_drill_and_key(tmp_path, text, expected):
    with pytest.raises(CatalogueError, match=expected):
        load_catalogue(_write(tmp_path, text))
