"""One term for one thing in the Chinese course: the glossary (tutor/lang/glossary.yaml) names,
for each English term, the Chinese term to use and the renderings to avoid beside it, and this
finds those renderings in the Chinese prose a learner reads: lessons, hint ladders (titles,
stages, the tests' stories) and the tool's message catalogue. Code is not prose: fenced and
indented code, `inline code`, identifiers (x.stride(0), x_row_stride, row-stride) and
{placeholders} are left out, and a term glossed with its English in brackets right after it
(步长（stride）) is the term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tutor.course.hints import stage_blocks
from tutor.course.yamlfile import YamlFileError, load_yaml

LANG = "zh"  # the language the glossary is for
GLOSSARY = Path(__file__).resolve().parents[1] / "lang" / "glossary.yaml"
PO = Path(__file__).resolve().parents[1] / "lang" / "locale" / "zh" / "LC_MESSAGES" / "tutor.po"


@dataclass(frozen=True)
class Term:
    en: str
    use: str
    avoid: tuple[str, ...]


def terms(path: Path = GLOSSARY) -> list[Term]:
    """The glossary's Chinese terms (a broken glossary is a YamlFileError naming it)."""
    data = load_yaml(path)
    entries = data.get("zh") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("format") != 1 or not isinstance(entries, list):
        raise YamlFileError(path, "expected 'format: 1' and a list under 'zh'")
    found = []
    for entry in entries:
        if not isinstance(entry, dict) or not {"en", "use", "avoid"} <= set(entry):
            raise YamlFileError(path, "each term needs 'en', 'use' and 'avoid'")
        found.append(Term(str(entry["en"]), str(entry["use"]), tuple(map(str, entry["avoid"]))))
    return found


def _pattern(variant: str) -> re.Pattern[str]:
    """`variant` as prose: a Latin word only where it is a word of its own, not a piece of an
    identifier, a path or a call."""
    text = re.escape(variant)
    before = r"(?<![\w.\-/<])" if variant[:1].isascii() and variant[:1].isalnum() else ""
    after = r"(?![\w(\-/>])" if variant[-1:].isascii() and variant[-1:].isalnum() else ""
    return re.compile(before + text + after)


_CODE_SPAN = re.compile(r"`[^`\n]*`")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|<[a-z]+>")


def _prose(text: str) -> str:
    return _PLACEHOLDER.sub(" ", _CODE_SPAN.sub(" ", text))


def problems(text: str, glossary: list[Term]) -> list[str]:
    """Each avoided rendering in the Chinese prose `text`, with the term to use and a few
    characters around it."""
    found = []
    for term in glossary:
        glossed = re.compile(re.escape(term.use) + r"\s*[（(][^）)]*[）)]")
        plain = glossed.sub(term.use, text)
        for variant in term.avoid:
            for match in _pattern(variant).finditer(plain):
                around = plain[max(0, match.start() - 12) : match.end() + 12].replace("\n", " ")
                found.append(f"'{variant}' where the glossary says '{term.use}': …{around}…")
    return found


def lesson_prose(path: Path) -> str:
    """A Chinese lesson's prose: no code blocks (fenced, or indented under a blank line)."""
    out, fenced, code = [], False, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not line.strip():
            code = False
        elif line.startswith("    ") and (code or not out or not out[-1].strip()):
            code = True
        if not fenced and not code:
            out.append(line)
    return _prose("\n".join(out))


def hints_prose(path: Path) -> str:
    """A Chinese hints file's prose: titles, the prose of every stage (not its code), and the
    translations of the tests' stories (not their English keys)."""
    data = load_yaml(path) or {}
    parts: list[str] = []
    for ladder in (data.get("diagnoses") or {}).values():
        if not isinstance(ladder, dict):
            continue
        parts.append(str(ladder.get("title", "")))
        stages = list(ladder.get("stages") or [])
        for key in ("when", "ways"):
            for more in (ladder.get(key) or {}).values():
                stages += list(more or [])
        for stage in stages:
            parts += [block for kind, block in stage_blocks(str(stage)) if kind == "prose"]
    parts += [str(value) for value in (data.get("stories") or {}).values()]
    return _prose("\n".join(parts))


def po_prose(path: Path = PO) -> str:
    """The Chinese of a gettext catalogue: its msgstr strings."""
    text = path.read_text(encoding="utf-8")
    strings = re.findall(r'^msgstr(?:\[\d\])? "(.*)"$', text, re.MULTILINE)
    return _prose("\n".join(strings))


SHOWN = 3  # a finding quotes this many, then counts the rest


def finding(subject: str, shown: str, found: list[str]) -> tuple[str, bool, str]:
    """(subject, ok, message) for one file's glossary problems, as dev check reports them."""
    if not found:
        return subject, True, f"{shown} keeps to the glossary (tutor/lang/glossary.yaml)"
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return subject, False, f"{shown}: " + "; ".join(found[:SHOWN]) + more


def drill_findings(lesson: Path, hints: Path, root: Path) -> list[tuple[str, bool, str]]:
    """A drill's Chinese lesson and hints against the glossary (each one that exists)."""
    glossary = terms()
    found = []
    for subject, path, prose in (
        ("glossary (zh lesson)", lesson, lesson_prose),
        ("glossary (zh hints)", hints, hints_prose),
    ):
        if path.is_file():
            shown = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
            found.append(finding(subject, shown, problems(prose(path), glossary)))
    return found


def course_findings(common_hints: Path, root: Path) -> list[tuple[str, bool, str]]:
    """The common Chinese hints and the tool's Chinese catalogue against the glossary."""
    glossary = terms()
    found = []
    if common_hints.is_file():
        said = problems(hints_prose(common_hints), glossary)
        shown = str(common_hints.relative_to(root))
        found.append(finding("glossary (zh common hints)", shown, said))
    found.append(finding("glossary (zh catalogue)", "tutor.po", problems(po_prose(), glossary)))
    return found
