"""In a drill's test run: the test's own English (stories, output names) in the learner's language.

The drill plugin points `use()` at the drill's hints file when a test module starts; `text()`
then gives a story or an output name in the active language (tutor.course.stories: the `stories:`
map of `hints/<id>.<lang>.yaml`), or the English as the test wrote it when there is no translation:
a missing or broken map never fails a learner's run.

tutor.harness.story_collect sets `collecting` to record every text the tests build (what dev
check's story rule compares with the translations), and `forcing` for its second pass.
"""

from __future__ import annotations

from pathlib import Path

from tutor.course.stories import EMPTY, StoryTable, table_for
from tutor.course.yamlfile import YamlFileError
from tutor.lang import i18n

_table: StoryTable = EMPTY
collecting = False  # record every story and output name into `seen`
# story_collect's second pass: a comparison without suspects fails (so a test that builds its
# suspects only for a wrong output builds them), one with suspects passes (so the test goes on).
forcing = False
seen: set[str] = set()


def use(hints_file: Path) -> None:
    """Translate with the stories of `hints_file`'s translation in the active language."""
    global _table
    try:
        _table = EMPTY if i18n.current() == i18n.ENGLISH else table_for(hints_file, i18n.current())
    except YamlFileError:  # dev check names it; the learner reads the English
        _table = EMPTY


def record(english: str) -> None:
    if collecting:
        seen.add(english)


def text(english: str) -> str:
    """`english` in the active language, when the drill's translation has it."""
    record(english)
    return _table.text(english)
