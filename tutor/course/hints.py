"""Hint ladders: for each diagnosis, a title and three stages (nudge, pointer, fix).

Ladders come from `hints/<drill>.yaml`, falling back to `hints/common.yaml` for the ids every
drill shares. A diagnosis with no ladder anywhere gets the common `mismatch` ladder.

A ladder may also say what to tell for each shape of wrong output the run found
(`tutor.states.WrongPattern`: only the end, NaN rows, off by one factor, whole rows), with as
many stages as its plain `stages`:

    mismatch:
      title: The values are wrong
      stages: [...]            # when no pattern fits
      when:
        end: [...]             # only the end is wrong: the grid and the last mask
        rows: [...]            # whole rows: strides

and for each way of writing the mistake that the run tells apart (a failure's facts["way"],
named by the test that found it: `beside-kernel` for a torch call beside a launch, `one-half`
for a sign flipped in one half of a rotation), again with as many stages; a way's stages come
before a pattern's:

    torch-fallback:
      title: ...
      stages: [...]            # no kernel launched
      ways:
        beside-kernel: [...]   # a kernel ran, and torch did the drill's core op beside it

and its text may carry the failing run's own numbers through placeholders (`PLACEHOLDERS`),
each of which reads as a phrase, and reads as a vaguer phrase when the run did not give the
number: `<count>` is "6 of 1200 values" (or "some values").
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from tutor.course import translations
from tutor.course.yamlfile import YamlFileError, line_of, load_yaml
from tutor.lang import i18n
from tutor.lang.i18n import N_, _
from tutor.states import WrongPattern

COMMON = "common"
FALLBACK = "mismatch"


@dataclass(frozen=True)
class Ladder:
    diagnosis: str
    title: str
    stages: tuple[str, ...]
    # Stages for a shape of wrong output (a WrongPattern value), as many as `stages`.
    when: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Stages for a way of writing the mistake (a failure's facts["way"]), as many as `stages`.
    ways: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def stages_for(self, pattern: str | None, way: str | None = None) -> tuple[str, ...]:
        """The stages to tell for the way the mistake was written (`way`, when the ladder has
        stages for it), else for the shape `pattern` of the wrong output."""
        if way and way in self.ways:
            return self.ways[way]
        return self.when.get(pattern or "", self.stages)


class HintFileError(YamlFileError):
    """A hints file with the wrong shape."""


@lru_cache(maxsize=32)
def _load(path: Path, mtime: float) -> dict[str, Ladder]:
    data = load_yaml(path)
    if not isinstance(data, dict) or data.get("format") != 1:
        raise HintFileError(path, _("expected a mapping with 'format: 1'"), line_of(data))
    ladders: dict[str, Ladder] = {}
    for diagnosis, raw in (data.get("diagnoses") or {}).items():
        stages = raw.get("stages") if isinstance(raw, dict) else None
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("title"), str)
            or not _is_stage_list(stages)
        ):
            raise HintFileError(
                path,
                _("diagnosis '{diagnosis}' needs a 'title' and a list of 'stages'").format(
                    diagnosis=diagnosis
                ),
                line_of(raw),
            )
        ladders[diagnosis] = Ladder(
            diagnosis,
            raw["title"].strip(),
            tuple(s.strip() for s in stages),
            _when(path, diagnosis, raw, len(stages)),
            _ways(path, diagnosis, raw, len(stages)),
        )
    return ladders


# The last stage's code is written in the reference solution's names; the learner's differ.
REFERENCE_NAMES = N_("The code uses the reference solution's names: put your own kernel's in.")


def _named(stages: tuple[str, ...]) -> tuple[str, ...]:
    """`stages` with REFERENCE_NAMES (in the active language) after the last one, when that
    one shows code."""
    if not any(kind == "code" for kind, _text in stage_blocks(stages[-1])):
        return stages
    return (*stages[:-1], f"{stages[-1]}\n\n{_(REFERENCE_NAMES)}")


def _with_names(ladder: Ladder) -> Ladder:
    return Ladder(
        ladder.diagnosis,
        ladder.title,
        _named(ladder.stages),
        {pattern: _named(stages) for pattern, stages in ladder.when.items()},
        {way: _named(stages) for way, stages in ladder.ways.items()},
    )


def _is_stage_list(stages: object) -> bool:
    return isinstance(stages, list) and bool(stages) and all(isinstance(s, str) for s in stages)


def _when(path: Path, diagnosis: str, raw: dict, count: int) -> dict[str, tuple[str, ...]]:
    """A ladder's `when:` mapping: a known pattern to as many stages as the plain ladder's."""
    when = raw.get("when") or {}
    if not isinstance(when, dict):
        raise HintFileError(
            path,
            _("diagnosis '{diagnosis}': 'when' maps patterns to stages").format(
                diagnosis=diagnosis
            ),
            line_of(raw),
        )
    known = [p.value for p in WrongPattern]
    out: dict[str, tuple[str, ...]] = {}
    for pattern, stages in when.items():
        if pattern not in known:
            raise HintFileError(
                path,
                _(
                    "diagnosis '{diagnosis}': unknown pattern '{pattern}' under 'when' "
                    "(known: {known})"
                ).format(diagnosis=diagnosis, pattern=pattern, known=", ".join(known)),
                line_of(when),
            )
        if not _is_stage_list(stages) or len(stages) != count:
            raise HintFileError(
                path,
                _(
                    "diagnosis '{diagnosis}': 'when: {pattern}' needs {count} stages, as "
                    "'stages' has"
                ).format(diagnosis=diagnosis, pattern=pattern, count=count),
                line_of(when),
            )
        out[pattern] = tuple(s.strip() for s in stages)
    return out


_WAY = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _ways(path: Path, diagnosis: str, raw: dict, count: int) -> dict[str, tuple[str, ...]]:
    """A ladder's `ways:` mapping: a way's name (lower-case words joined by '-') to as many
    stages as the plain ladder's."""
    ways = raw.get("ways") or {}
    if not isinstance(ways, dict):
        raise HintFileError(
            path,
            _("diagnosis '{diagnosis}': 'ways' maps ways to stages").format(diagnosis=diagnosis),
            line_of(raw),
        )
    out: dict[str, tuple[str, ...]] = {}
    for way, stages in ways.items():
        if not isinstance(way, str) or not _WAY.match(way):
            raise HintFileError(
                path,
                _(
                    "diagnosis '{diagnosis}': '{way}' under 'ways' is no name of lower-case "
                    "words joined by '-'"
                ).format(diagnosis=diagnosis, way=way),
                line_of(ways),
            )
        if not _is_stage_list(stages) or len(stages) != count:
            raise HintFileError(
                path,
                _(
                    "diagnosis '{diagnosis}': 'ways: {way}' needs {count} stages, as 'stages' has"
                ).format(diagnosis=diagnosis, way=way, count=count),
                line_of(ways),
            )
        out[way] = tuple(s.strip() for s in stages)
    return out


def drill_ladders(hints_dir: Path, name: str, lang: str = i18n.ENGLISH) -> dict[str, Ladder]:
    """The ladders of one hints file (`hints/<name>.yaml`, or its `lang` translation
    `hints/<name>.<lang>.yaml`) alone; none when it is missing."""
    path = hints_dir / f"{name}.yaml"
    if lang != i18n.ENGLISH:
        path = translations.translated_path(path, lang)
    return _load(path, path.stat().st_mtime) if path.is_file() else {}


class HintBook:
    """The ladders one drill can show, in `lang` (the active language by default): a fresh
    translation's ladders over the English ones, and `note` saying so when the drill's are
    shown in English (tutor.course.translations)."""

    def __init__(self, hints_dir: Path, drill_id: str, lang: str | None = None) -> None:
        lang = lang or i18n.current()
        self.ladders: dict[str, Ladder] = {}
        self.note = ""
        for name in (COMMON, drill_id):  # the drill's own file overrides the common one
            self._add(drill_ladders(hints_dir, name))
            source = hints_dir / f"{name}.yaml"
            if lang == i18n.ENGLISH or not source.is_file():
                continue
            translation = translations.judge(source, lang)
            if translation.fresh:
                try:
                    self._add(drill_ladders(hints_dir, name, lang))
                    continue
                except YamlFileError as exc:  # a ladder of the wrong shape: the English, said
                    translation = replace(
                        translation, state=translations.Freshness.BROKEN, problem=str(exc)
                    )
            if not self.note:
                self.note = translations.note(translation, hints_dir.parent, "hints")
        self.ladders = {d: _with_names(ladder) for d, ladder in self.ladders.items()}

    def _add(self, ladders: dict[str, Ladder]) -> None:
        """`ladders` over the ones so far; a drill's ladder for a generic diagnosis keeps the
        common ladder's stages for the ways it does not tell itself (a row stride in a tensor
        the learner allocated reads the same in every drill)."""
        for diagnosis, ladder in ladders.items():
            before = self.ladders.get(diagnosis)
            if before is not None and before.ways:
                ladder = replace(ladder, ways={**before.ways, **ladder.ways})
            self.ladders[diagnosis] = ladder

    def ladder(self, diagnosis: str) -> Ladder:
        found = self.ladders.get(diagnosis) or self.ladders.get(FALLBACK)
        if found is None:
            return Ladder(diagnosis, diagnosis, (_("Read the failing test's message."),))
        return found

    def title(self, diagnosis: str) -> str:
        found = self.ladders.get(diagnosis)
        return found.title if found else diagnosis


# -- one source, two renderings ----------------------------------------------------------------
# A stage is prose with code in it, written as YAML block text: code either indented by four
# spaces under a prose line, or as lines of its own (`x = tl.load(...)`, `# a comment`, `...`,
# and CUDA C++'s `const float v = ...;`, `__syncthreads();`, `// a comment`).
# `stage_blocks` finds which is which; the app shows the blocks as Markdown (code fenced, so a
# `# comment` never becomes a heading and lines never run together), the CLI as plain text.

_CODE_LINE = re.compile(
    r"""^\s*(
        \#                                   # a comment
      | \.\.\.                               # elided code
      | (def|return|if|elif|else|for|while|with|import|from|pid|grid)\b(?![a-z])
      | @                                    # a decorator
      | [A-Za-z_][\w.]*(\[[^\]]*\])*(\s*,\s*[A-Za-z_][\w.]*)*\s*[-+*/]?=(?!=)   # an assignment
      | [A-Za-z_][\w.]*\(                    # a call at the start of the line
      | [)\]}]                               # a closing bracket
      | //                                   # a C++ comment
      | ((const|static|volatile|extern|unsigned|signed|long|__shared__|__device__|__global__)\s+)*
        (void|bool|char|short|int|long|float|double|auto|T|half|__nv_bfloat16\w*|\w+_t|\w+[234])
        [\s*&]+[A-Za-z_]\w*(\[[^\]]*\])*\s*[=;,(]   # a C++ declaration of a C++ type
      | [A-Za-z_]\w*(\[[^\]]*\])+\s*;?\s*$  # an element alone on its line: x[row * stride + col]
    )""",
    re.VERBOSE,
)


_PROSE_WORDS = re.compile(r"\b(is|are|has|have|the|gets|must|so|then|which|when)\b")
# Chinese outside a comment is prose: no identifier in a stage's code is written in it.
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# A C++ comment after a statement's end (`;`, a bracket): Python's floor division `n // BLOCK`
# follows a name or a number, and is cut only after a call, where what is left is code anyway.
_C_COMMENT = re.compile(r"(?<=[;{})\]])\s+//(?:\s|$)")


def _is_code(line: str) -> bool:
    """A line of code: starts like one, and (outside a comment, `#` or `//`) reads like none of
    English.

    A line that ends in "," is code when a bracket it opened is still open (a call whose
    arguments go on to the next line); prose ends a clause with it."""
    if line.lstrip().startswith(("#", "//")):
        return True
    code = _C_COMMENT.split(line.split("  #")[0], maxsplit=1)[0]
    # `for (...) ...` is code with the rest elided; a line of `...` alone reads as it did
    ending = code.rstrip().removesuffix("...").rstrip() or "..."
    continued = ending.endswith(",") and _open_brackets(code) > 0
    return (
        bool(_CODE_LINE.match(code))
        and not _PROSE_WORDS.search(code)
        and not _CJK.search(code)
        and (continued or not ending.endswith((".", "?", ",", "。", "？", "，", "：")))
    )


def _open_brackets(code: str) -> int:
    """How many more brackets `code` opens than it closes."""
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


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


def stage_markdown(text: str, syntax: str = "python") -> str:
    """The stage as Markdown: prose as it is, code in fenced blocks highlighted as `syntax`
    (the drill's kernel language's: python, cpp)."""
    parts = []
    for kind, block in stage_blocks(text):
        parts.append(f"```{syntax}\n{block}\n```" if kind == "code" else block)
    return "\n\n".join(parts)


# -- placeholders -----------------------------------------------------------------------------
# Each is a phrase made from the failing test's facts (tutor.harness.errormap.ErrorMap.facts,
# carried by the run's record), or, when the run did not give what it needs, the vaguer phrase
# after it. `<drill>` and `<file>` are the drill's id and its file; `<tensor>` is the name of the
# tensor the mistake is about (`x` when the run did not say), for code: `<tensor>_row_stride`.


def _count(f: dict) -> str:
    return _("{wrong} of {total} values").format(wrong=f["wrong"], total=f["total"])


def _nonfinite(f: dict) -> str:
    return _("{nonfinite} of {total} values").format(nonfinite=f["nonfinite"], total=f["total"])


def _rows(f: dict) -> str:
    return _("{wrong} of {rows} rows").format(wrong=f["wrong_rows"], rows=f["rows"])


def _first(f: dict) -> str:
    first = str(f["first"])
    text = _("position {at}") if first.startswith("[") else _("index {at}")
    return text.format(at=first)


def _unwritten(f: dict) -> str:
    if f["fill"] == "zeros":
        return _("read exactly 0, the zeros the tensor was made with")
    return _("still hold the value the empty tensor was filled with")


def _shape(f: dict) -> str:
    return _("shape {shape}").format(shape=f["shape"])


def _stride(f: dict) -> str:
    return _("{stride} elements apart").format(stride=int(f["stride"]))


def _strides(f: dict) -> str:
    return _("strides {strides}").format(strides=f["strides"])


def _stored(f: dict) -> str:
    return _("{stored} elements apart").format(stored=int(f["stored"]))


# Each placeholder: how to make its phrase from the facts, and the vaguer phrase (marked for
# the catalogue here, translated when it is used).
PLACEHOLDERS: dict[str, tuple] = {
    "count": (_count, N_("some values")),  # "6 of 1200 values"
    "nonfinite": (_nonfinite, N_("some values")),  # "1 of 4 values": those NaN or inf
    "rows": (_rows, N_("some rows")),  # "2 of 8 rows"
    "first": (_first, N_("one position")),  # "index 768", "position [2, 0]"
    "factor": (lambda f: str(f["factor"]), N_("one factor")),  # "x0.5", "x0.5, x2, ..."
    "unwritten": (_unwritten, N_("were never written")),  # what never-written values hold
    # the tensor a stride or layout mistake is about, as the run observed it
    "shape": (_shape, N_("its shape")),  # "shape [4, 100]"
    "stride": (_stride, N_("as far apart as its stride says")),  # its rows: "100 elements apart"
    "stored": (_stored, N_("somewhere else")),  # where the kernel put them: "128 elements apart"
    "strides": (_strides, N_("strides of its own")),  # "strides (1, 5)"
}
# Placeholders that stand for a name in code, not a phrase: the name the run gave, else this.
NAMES = {"tensor": "x"}  # the tensor a mistake is about: x_ptr, x_row_stride, ...
_PLACEHOLDER = re.compile(r"<([a-z]+)>")


# A kernel that takes several rows a program (the run saw fewer programs than rows) may hold
# them in one 2-D tile, where the row reductions a stage's code writes along axis=0 run along
# axis=1: said after such a stage, since the run cannot tell a tile from a loop over rows.
SEVERAL_ROWS = N_(
    "Your kernel takes {rows} rows a program. Held in one [ROWS, BLOCK_N] tile, each row's "
    "reductions above run along axis=1 (tl.sum(x, axis=1)), and a row's result meets its row "
    "as result[:, None]; walked one row at a time in a loop, axis=0 stays."
)


def fitted(stage: str, facts: dict) -> str:
    """`stage` with what the run saw of the learner's kernel that its code cannot know: after
    code that reduces along axis=0, a kernel of several rows a program (facts["rows_per_program"])
    hears how a 2-D tile of rows writes it."""
    rows = facts.get("rows_per_program")
    if not isinstance(rows, int) or rows < 2:
        return stage
    if not any(kind == "code" and "axis=0" in text for kind, text in stage_blocks(stage)):
        return stage
    return f"{stage}\n\n{_(SEVERAL_ROWS).format(rows=rows)}"


def fill(text: str, drill_id: str, file: str, facts: dict | None = None) -> str:
    """`text` with its placeholders filled: `<drill>`, `<file>`, and PLACEHOLDERS from `facts`
    (a missing fact gives the vaguer phrase). Anything else in angle brackets is left as is."""
    facts = facts or {}

    def phrase(match: re.Match) -> str:
        name = match.group(1)
        if name == "drill":
            return drill_id
        if name == "file":
            return file
        if name in NAMES:
            return str(facts.get(name) or NAMES[name])
        if name not in PLACEHOLDERS:
            return match.group(0)
        make, vaguer = PLACEHOLDERS[name]
        try:
            return make(facts)
        except (KeyError, TypeError, ValueError):
            return _(vaguer)

    return _PLACEHOLDER.sub(phrase, text)
