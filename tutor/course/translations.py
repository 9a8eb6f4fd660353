"""Translated course files: where each sits, whether it is still fresh, and what to say if not.

A translation sits beside its English source, with the language before the suffix
(`drills/content/t3.zh.md` beside `t3.md`, `hints/t3.zh.yaml` beside `t3.yaml`), and records
the sha256 of the English file it was made from (what `sha256sum` prints):

- a lesson in front matter on its first three lines:

      ---
      source_sha256: 3f1c...
      ---

- a hints file in a top-level key, `source_sha256: 3f1c...`.

A translation is shown only while that sha256 is the English file's: once the English changed,
the tutor shows the English with a one-line note (`note`), and `tutor dev check` names the stale
file (tutor.dev.translations).
"""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from tutor.course.yamlfile import YamlFileError, load_yaml, read_text
from tutor.lang.i18n import ENGLISH, _

_FRONT_MATTER = re.compile(r"---\nsource_sha256: *([0-9a-f]{64}) *\n---\n")
SHA_KEY = "source_sha256"


class Freshness(str, enum.Enum):
    FRESH = "fresh"
    STALE = "stale"  # the English changed since it was translated
    MISSING = "missing"
    BROKEN = "broken"  # unreadable, or no sha256 of its source: see `problem`


@dataclass(frozen=True)
class Translation:
    """One translated file, judged against its English source."""

    source: Path
    path: Path
    state: Freshness
    problem: str = ""  # for BROKEN: what is wrong, with the file and line

    @property
    def fresh(self) -> bool:
        return self.state is Freshness.FRESH


def translated_path(source: Path, lang: str) -> Path:
    """`drills/content/t3.md` -> `drills/content/t3.zh.md`."""
    return source.with_name(f"{source.stem}.{lang}{source.suffix}")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lesson_body(text: str) -> tuple[str | None, str]:
    """A translated lesson's recorded sha256 (None without front matter) and its text after it."""
    match = _FRONT_MATTER.match(text)
    return (match.group(1), text[match.end() :]) if match else (None, text)


def _recorded(path: Path) -> str:
    """The sha256 `path` records, or a YamlFileError saying where it should be."""
    if path.suffix == ".md":
        recorded, _body = lesson_body(read_text(path))
        if recorded is None:
            raise YamlFileError(
                path,
                f"must start with front matter: ---, {SHA_KEY}: <sha256 of the English>, ---",
                1,
            )
        return recorded
    data = load_yaml(path)
    value = data.get(SHA_KEY) if isinstance(data, dict) else None
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{64}", value):
        raise YamlFileError(path, f"needs a top-level '{SHA_KEY}: <sha256 of the English file>'", 1)
    return value


def judge(source: Path, lang: str) -> Translation:
    """The `lang` translation of `source`, and whether it may be shown."""
    path = translated_path(source, lang)
    if not path.is_file():
        return Translation(source, path, Freshness.MISSING)
    try:
        recorded = _recorded(path)
    except YamlFileError as exc:
        return Translation(source, path, Freshness.BROKEN, str(exc))
    if not source.is_file() or recorded != sha256_of(source):
        return Translation(source, path, Freshness.STALE)
    return Translation(source, path, Freshness.FRESH)


def note(translation: Translation, root: Path, what: str) -> str:
    """The one line shown above the English when `translation` cannot be: `what` is "lesson"
    or "hints". Shown in the chosen language."""
    shown = {
        "translation": _relative(translation.path, root),
        "source": _relative(translation.source, root),
    }
    if translation.state is Freshness.MISSING:
        text = {
            "lesson": _("This lesson is in English: {translation} does not exist yet."),
            "hints": _("These hints are in English: {translation} does not exist yet."),
        }[what]
    elif translation.state is Freshness.STALE:
        text = {
            "lesson": _(
                "This lesson is in English: {source} changed since {translation} was "
                "translated from it."
            ),
            "hints": _(
                "These hints are in English: {source} changed since {translation} was "
                "translated from it."
            ),
        }[what]
    else:  # BROKEN: what is wrong with it, where (a YAML error, a file that is not UTF-8)
        problem = translation.problem
        if problem.startswith(str(translation.path)):
            problem = shown["translation"] + problem[len(str(translation.path)) :]
        text = {
            "lesson": _("This lesson is in English: {problem}"),
            "hints": _("These hints are in English: {problem}"),
        }[what]
        return text.format(problem=problem)
    return text.format(**shown)


def _relative(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def lesson_text(source: Path, lang: str, root: Path) -> tuple[str, str]:
    """The lesson to show in `lang`, and the note to put above it ("" when none is needed).
    An English lesson that cannot be read is a YamlFileError (a missing one is the caller's
    to report); a translation that cannot be is a note, and the English."""
    if lang == ENGLISH:
        return read_text(source), ""
    translation = judge(source, lang)
    if translation.fresh:
        return lesson_body(read_text(translation.path))[1], ""
    return read_text(source), note(translation, root, "lesson")
