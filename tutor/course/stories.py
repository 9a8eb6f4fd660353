"""The drill tests' own English, and its translation: suspect stories and output names.

A drill test names a mistake with a story ("Your rstd matches the variance with padded lanes in
it.") and names the output it compares (`what="rstd"`, `"output for a bfloat16 x of shape
(3, 700)"`). Those words are the test's, not the tool's, so they are translated beside the
drill's hints, in a top-level map of `hints/<id>.<lang>.yaml`:

    stories:
      "the mean of squares taken as sum(x^2) / BLOCK_N instead of / N": "……"
      "a running sum (blocks of {block}) not rescaled ...": "……（每块 {block}）……"

A key is the English as the test writes it; `{name}` in a key stands for any text there (a
test builds many stories with f-strings), and the same `{name}` in the Chinese receives it.
What a placeholder caught is translated in turn when the map has it, and kept as it is when it
is not prose (numbers, shapes, identifiers, formulas): a story whose caught text reads as
English words the map does not have counts as untranslated. An untranslated story is shown in
English (never an error while a learner runs); `tutor dev check` names it.

Which English a drill's tests can show is found by running them (`tutor dev stories`,
tutor.dev.stories), not by reading their source, and kept in `drills/stories/<id>.yaml` with the
sha256 of the test file it was collected from, so dev check needs no run to name a missing
translation: this module reads those files and the translations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tutor.course.translations import translated_path
from tutor.course.yamlfile import YamlFileError, line_of, load_yaml

KEY = "stories"
COMMON = "common"  # hints/common.<lang>.yaml: stories several drills' tests share
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Caught text that reads as English: two words of letters in a row ("the first block's max").
_PROSE = re.compile(r"[A-Za-z]{2,}'?[a-z]*\s+[A-Za-z]{2,}")


@dataclass(frozen=True)
class _Template:
    pattern: re.Pattern[str]
    text: str  # the translation, with the same {name}s


class StoryTable:
    """English story -> its translation, exact keys first, then keys with placeholders."""

    def __init__(self, entries: dict[str, str]) -> None:
        self.exact = {k: v for k, v in entries.items() if not _PLACEHOLDER.search(k)}
        self.templates = [
            _Template(_compile(k), v) for k, v in entries.items() if _PLACEHOLDER.search(k)
        ]

    def translate(self, english: str, depth: int = 0) -> str | None:
        """The translation of `english`, or None when the table cannot give all of it."""
        if english in self.exact:
            return self.exact[english]
        if depth > 3:  # a caught text inside a caught text inside ...: enough
            return None
        for template in self.templates:
            match = template.pattern.fullmatch(english)
            if match is None:
                continue
            parts = {}
            for name, caught in match.groupdict().items():
                parts[name] = self._part(caught, depth)
                if parts[name] is None:
                    break
            else:
                return template.text.format(**parts)
        return None

    def _part(self, caught: str, depth: int) -> str | None:
        translated = self.translate(caught, depth + 1)
        if translated is not None:
            return translated
        return None if _PROSE.search(caught) else caught

    def lacks(self, english: str) -> bool:
        """Whether `english` reads as English words the table cannot translate (an output
        named `y` or `rstd`, a shape, a formula alone need no translation)."""
        return self.translate(english) is None and bool(_PROSE.search(english))

    def text(self, english: str) -> str:
        """`english` translated, else `english` itself."""
        translated = self.translate(english)
        return english if translated is None else translated


EMPTY = StoryTable({})


def _compile(key: str) -> re.Pattern[str]:
    pieces, at = [], 0
    seen: set[str] = set()
    for match in _PLACEHOLDER.finditer(key):
        pieces.append(re.escape(key[at : match.start()]))
        name = match.group(1)
        pieces.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        at = match.end()
    pieces.append(re.escape(key[at:]))
    return re.compile("".join(pieces), re.DOTALL)


def table_entries(path: Path) -> dict[str, str]:
    """The `stories:` map of a translated hints file ({} when it has none or is missing).

    A map with the wrong shape, or a translation whose `{name}`s are not its key's, is a
    YamlFileError naming the file and line.
    """
    if not path.is_file():
        return {}
    data = load_yaml(path)
    raw = data.get(KEY) if isinstance(data, dict) else None
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise YamlFileError(path, f"'{KEY}' must map English text to its translation", line_of(raw))
    for english, translated in raw.items():
        names, given = set(_PLACEHOLDER.findall(english)), set(_PLACEHOLDER.findall(translated))
        if names != given:
            raise YamlFileError(
                path,
                f"{KEY}: the translation of {english!r} has placeholders "
                f"{sorted(given) or 'none'}, its English {sorted(names) or 'none'}",
                line_of(raw),
            )
    return dict(raw)


def drill_entries(hints_file: Path, lang: str) -> dict[str, str]:
    """The drill's own `stories:` in `lang`, then those of `hints/common.<lang>.yaml` (words
    several drills' tests share, such as "output for a {dtype} x of shape {shape}"): the
    drill's come first, so its more specific templates are tried first."""
    common = translated_path(hints_file.with_name(f"{COMMON}.yaml"), lang)
    merged = table_entries(translated_path(hints_file, lang))
    for english, translated in table_entries(common).items():
        merged.setdefault(english, translated)
    return merged


@lru_cache(maxsize=32)
def _table(hints_file: Path, lang: str, stamp: tuple) -> StoryTable:
    return StoryTable(drill_entries(hints_file, lang))


def table_for(hints_file: Path, lang: str) -> StoryTable:
    """The story table for `hints/<id>.yaml` in `lang` (empty when there is none)."""
    common = hints_file.with_name(f"{COMMON}.yaml")
    stamp = tuple(_mtime(translated_path(f, lang)) for f in (hints_file, common))
    return _table(hints_file, lang, stamp)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


# -- the English a drill's tests can show, collected by running them -------------------------

FORMAT = 1
SHA_KEY = "source_sha256"


def read_collected(path: Path) -> tuple[str, list[str]]:
    """(the sha256 of the test file it was collected from, the English) from drills/stories/."""
    data = load_yaml(path)
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(data.get(SHA_KEY), str)
        or not isinstance(data.get(KEY), list)
        or not all(isinstance(s, str) for s in data[KEY])
    ):
        raise YamlFileError(
            path, f"expected 'format: {FORMAT}', '{SHA_KEY}' and a list of '{KEY}'", line_of(data)
        )
    return data[SHA_KEY], data[KEY]
