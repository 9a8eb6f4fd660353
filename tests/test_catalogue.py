"""drills.yaml is read into typed records; a broken file says where and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.catalogue import CatalogueError, load_catalogue
from tutor.paths import CoursePaths


def test_real_catalogue_has_the_contract_drills(catalogue):
    assert [d.id for d in catalogue.drills] == ["t1", "t2", "t3", "f3"]
    t3 = catalogue.drill("t3")
    assert t3.file == "t3_layernorm.py"
    assert t3.functions == ("layer_norm", "rms_norm")
    assert catalogue.drill("f3").functions == ("fused_add_rmsnorm", "silu_and_mul")
    assert {c.label for c in t3.bench} >= {"layer_norm m=4096 n=8192 bfloat16"}


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
format: 1
tracks:
  - {id: T, title: Basics}
drills:
  - id: a1
    track: T
    title: A
    file: a1.py
    functions: [f]
"""


def test_minimal_catalogue_gets_defaults(tmp_path):
    cat = load_catalogue(_write(tmp_path, GOOD))
    assert cat.drill("a1").coming is False
    assert cat.drill("a1").bench == ()
    with pytest.raises(KeyError, match="no drill 'zz'"):
        cat.drill("zz")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace("functions: [f]", "functions: [f"), r"drills\.yaml:\d+: not valid YAML"),
        (GOOD.replace("    file: a1.py\n", ""), r"drills\.yaml:5: drill 'a1': missing key 'file'"),
        (
            GOOD.replace("track: T\n", "track: Q\n"),
            r"drill 'a1': key 'track' names unknown track 'Q'",
        ),
        (GOOD.replace("format: 1", "format: 9"), r"format 9 is not supported"),
        (
            GOOD.replace("functions: [f]", "functions: f"),
            r"drill 'a1': key 'functions' must be list",
        ),
        (GOOD + "    colour: red\n", r"drill 'a1': unknown key 'colour'"),
        (GOOD + "    bench: [{function: g, shape: {n: 4}}]\n", r"bench function 'g' is not in"),
    ],
)
def test_broken_catalogue_names_file_line_drill_and_key(tmp_path, text, expected):
    with pytest.raises(CatalogueError, match=expected):
        load_catalogue(_write(tmp_path, text))
