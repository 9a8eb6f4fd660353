"""Hint ladders: for each diagnosis, a title and three stages (nudge, pointer, fix).

Ladders come from `hints/<drill>.yaml`, falling back to `hints/common.yaml` for the ids every
drill shares. A diagnosis with no ladder anywhere gets the common `mismatch` ladder.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tutor.yamlfile import YamlFileError, line_of, load_yaml

COMMON = "common"
FALLBACK = "mismatch"


@dataclass(frozen=True)
class Ladder:
    diagnosis: str
    title: str
    stages: tuple[str, ...]


class HintFileError(YamlFileError):
    """A hints file with the wrong shape."""


@lru_cache(maxsize=32)
def _load(path: Path, mtime: float) -> dict[str, Ladder]:
    data = load_yaml(path)
    if not isinstance(data, dict) or data.get("format") != 1:
        raise HintFileError(path, "expected a mapping with 'format: 1'", line_of(data))
    ladders: dict[str, Ladder] = {}
    for diagnosis, raw in (data.get("diagnoses") or {}).items():
        stages = raw.get("stages") if isinstance(raw, dict) else None
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("title"), str)
            or not (isinstance(stages, list) and stages and all(isinstance(s, str) for s in stages))
        ):
            raise HintFileError(
                path,
                f"diagnosis '{diagnosis}' needs a 'title' and a list of 'stages'",
                line_of(raw),
            )
        ladders[diagnosis] = Ladder(
            diagnosis, raw["title"].strip(), tuple(s.strip() for s in stages)
        )
    return ladders


def drill_ladders(hints_dir: Path, name: str) -> dict[str, Ladder]:
    """The ladders of one hints file (`hints/<name>.yaml`) alone; none when it is missing."""
    path = hints_dir / f"{name}.yaml"
    return _load(path, path.stat().st_mtime) if path.is_file() else {}


class HintBook:
    """The ladders one drill can show."""

    def __init__(self, hints_dir: Path, drill_id: str) -> None:
        self.ladders: dict[str, Ladder] = {}
        for name in (COMMON, drill_id):  # the drill's own file overrides the common one
            self.ladders.update(drill_ladders(hints_dir, name))

    def ladder(self, diagnosis: str) -> Ladder:
        found = self.ladders.get(diagnosis) or self.ladders.get(FALLBACK)
        if found is None:
            return Ladder(diagnosis, diagnosis, ("Read the failing test's message.",))
        return found

    def title(self, diagnosis: str) -> str:
        found = self.ladders.get(diagnosis)
        return found.title if found else diagnosis


# -- one source, two renderings ----------------------------------------------------------------
# A stage is prose with code in it, written as YAML block text: code either indented by four
# spaces under a prose line, or as lines of its own (`x = tl.load(...)`, `# a comment`, `...`).
# `stage_blocks` finds which is which; the app shows the blocks as Markdown (code fenced, so a
# `# comment` never becomes a heading and lines never run together), the CLI as plain text.

_CODE_LINE = re.compile(
    r"""^\s*(
        \#                                   # a comment
      | \.\.\.                               # elided code
      | (def|return|if|elif|else|for|while|with|import|from|pid|grid)\b(?![a-z])
      | @                                    # a decorator
      | [A-Za-z_][\w.]*(\[[^\]]*\])?(\s*,\s*[A-Za-z_][\w.]*)*\s*[-+*/]?=(?!=)   # an assignment
      | [A-Za-z_][\w.]*\(                    # a call at the start of the line
      | [)\]}]                               # a closing bracket
    )""",
    re.VERBOSE,
)


_PROSE_WORDS = re.compile(r"\b(is|are|has|have|the|gets|must|so|then|which|when)\b")


def _is_code(line: str) -> bool:
    """A line of code: starts like one, and (outside a comment) reads like none of English."""
    if line.lstrip().startswith("#"):
        return True
    code = line.split("  #")[0]
    return (
        bool(_CODE_LINE.match(line))
        and not _PROSE_WORDS.search(code)
        and not line.rstrip().endswith((".", "?", ","))
    )


def stage_blocks(text: str) -> list[tuple[str, str]]:
    """The stage as ("prose" | "code", text) blocks, in order; code blocks are dedented.

    A paragraph (lines between blank lines) that opens with a line of code is code. One that
    opens with prose is prose, up to a line indented by four spaces, or a line of code after
    a line ending in ":" ("Load the padded lanes as -inf:"); from there on it is code.
    """
    blocks: list[list] = []  # [kind, lines]

    def add(kind: str, line: str, fresh: bool) -> None:
        if blocks and blocks[-1][0] == kind and (kind == "code" or not fresh):
            if kind == "code" and fresh:
                blocks[-1][1].append("")  # code paragraphs in a row: one block, a blank between
            blocks[-1][1].append(line)
        else:
            blocks.append([kind, [line]])

    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.splitlines()
        base = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
        kind = "code" if _is_code(lines[0]) or base >= 4 else "prose"
        previous = ""
        for n, line in enumerate(lines):
            deeper = len(line) - len(line.lstrip()) - base >= 4
            if kind == "prose" and (deeper or (previous.rstrip().endswith(":") and _is_code(line))):
                kind, fresh = "code", True
            else:
                fresh = n == 0
            add(kind, line, fresh)
            previous = line
    out: list[tuple[str, str]] = []
    for kind, lines in blocks:
        if kind == "code":
            out.append(("code", textwrap.dedent("\n".join(lines)).strip("\n")))
        else:
            out.append(("prose", " ".join(line.strip() for line in lines)))
    return out


def stage_markdown(text: str) -> str:
    """The stage as Markdown: prose as it is, code in fenced Python blocks."""
    parts = []
    for kind, block in stage_blocks(text):
        parts.append(f"```python\n{block}\n```" if kind == "code" else block)
    return "\n\n".join(parts)


def fill(text: str, drill_id: str, file: str) -> str:
    """Placeholders a ladder may use: `<drill>` (the drill's id) and `<file>` (its file)."""
    return text.replace("<drill>", drill_id).replace("<file>", file)
