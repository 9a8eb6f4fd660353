"""Small Chinese translations written into a scratch course, made from its English files: the
tests of the language machinery do not wait for (or depend on the wording of) the real ones."""

from __future__ import annotations

import yaml

from tutor.course.paths import CoursePaths
from tutor.course.translations import sha256_of, translated_path

LESSON_LINE = "这是中文讲解：先求均值，再求方差。"


def translate_lesson(course: CoursePaths, drill_id: str) -> None:
    source = course.lesson(drill_id)
    text = (
        f"---\nsource_sha256: {sha256_of(source)}\n---\n"
        f"# {drill_id.upper()} — 中文讲解\n\n{LESSON_LINE}\n\n"
        "<details><summary>答案</summary>\n\n除以 N，而不是 BLOCK_N。\n\n</details>\n"
    )
    translated_path(source, "zh").write_text(text, encoding="utf-8")


def translate_hints(course: CoursePaths, name: str) -> None:
    """`hints/<name>.zh.yaml`: every ladder of the English, title and stages marked 中文; the
    `stories:` map the course's translation has, kept."""
    source = course.hints_dir / f"{name}.yaml"
    english = yaml.safe_load(source.read_text(encoding="utf-8"))
    diagnoses = {}
    for diagnosis, ladder in english["diagnoses"].items():
        zh = {
            "title": f"中文标题 {diagnosis}",
            "stages": [
                f"中文第 {n} 步：看看 <count>。" for n in range(1, len(ladder["stages"]) + 1)
            ],
        }
        for key in ("when", "ways"):  # a shape of wrong output, a way of writing the mistake
            if ladder.get(key):
                zh[key] = {
                    name: [f"中文 {name} 第 {n} 步。" for n in range(1, len(stages) + 1)]
                    for name, stages in ladder[key].items()
                }
        diagnoses[diagnosis] = zh
    data = {"format": 1, "source_sha256": sha256_of(source)}
    target = translated_path(source, "zh")
    if (
        target.is_file()
    ):  # the course's own translations of its tests' stories (tutor.course.stories)
        stories = (yaml.safe_load(target.read_text(encoding="utf-8")) or {}).get("stories")
        if stories:
            data["stories"] = stories
    data["diagnoses"] = diagnoses  # last: tests append ladders to the file's end
    translated_path(source, "zh").write_text(
        yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )


def translate_drill(course: CoursePaths, drill_id: str) -> None:
    translate_lesson(course, drill_id)
    translate_hints(course, drill_id)
    translate_hints(course, "common")
