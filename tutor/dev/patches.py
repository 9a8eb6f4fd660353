"""One-idea mutants kept as unified diffs against their drill's solution.

A known-buggy kernel that differs from the solution by one idea is stored as the diff that
makes that one change (`drills/mutants/<id>/<diagnosis>__<variant>.patch`), so it follows the
solution as it evolves; when the solution changes under it, the patch no longer applies and
`tutor dev check` says so with the line, instead of proving a stale copy. Text before the first
`---` line is the patch's description. A description line `base: correct__<variant>.py` makes
the patch apply to that correct variant of the same drill instead of the solution: several
mistakes written in one alternative style then share that style's file instead of each copying
it.

Hunks must match exactly (no fuzz): a mutant that cannot be rebuilt faithfully is an error.

When the file under a patch changes elsewhere (a docstring grows, a signature is reformatted),
`rebase` carries the patch's one idea onto the new file: its edits move with the unchanged
lines they sit in, and an edit whose lines changed too is a PatchError, left to a person.

    tutor dev rebase t3 [--since HEAD]   # t3's patches, from their base files at HEAD

When the solution grows a path the drill does not teach (m1's tensor descriptors), the taught
version stays as a correct variant and `onto` moves every patch built on the solution onto it:
each is rebased from the solution at REV onto the variant and gets the variant's `base:` line,
so its mutant is the file it was.

    tutor dev rebase m1 --onto correct__pointer_tiles.py [--since HEAD]

`code_lines_apart` measures how far a whole-file mutant is from a file it could be a patch on,
in lines of code (comments, docstrings and layout do not count): `tutor dev check` asks for a
patch when a whole file is within NEAR_COPY_LINES of the solution or a correct variant.
"""

from __future__ import annotations

import ast
import difflib
import re

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BASE = re.compile(r"^base:\s*(\S+)\s*$", re.IGNORECASE)
# A whole-file mutant this close to a base is one idea: keep it as a patch. Seven, because the
# copies issue 56 made patches were 1-10 lines of code from their base (m1's pointer-advancing
# ptr-advance__a_by_block 7), and the closest whole files left are 8: t0's
# grid-too-small__floor_div, which tests/test_warm.py runs by path, and t5's
# grid-too-small__cdiv_m_on_both_axes, written in names of its own.
NEAR_COPY_LINES = 7


class PatchError(Exception):
    """The patch does not apply to the file it was made from; the message says where."""


def make(old: str, new: str, name: str, description: str = "") -> str:
    """The unified diff that turns `old` into `new`, with a description in front."""
    diff = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
        n=2,
    )
    head = "".join(f"{line}\n" for line in description.strip().splitlines())
    return head + "".join(line if line.endswith("\n") else line + "\n" for line in diff)


def apply(old: str, patch: str, old_name: str = "the solution") -> str:
    """`old` with every hunk of `patch` applied; PatchError when a hunk does not match.

    `old_name` names `old` in that error ("expects line 7 of <old_name> to be ...").
    """
    lines = old.splitlines(keepends=True)
    out: list[str] = []
    position = 0  # lines of `old` consumed so far
    hunks = _hunks(patch)
    if not hunks:
        raise PatchError("the patch has no hunks")
    for start, body, number in hunks:
        if start - 1 < position:
            raise PatchError(f"hunk at patch line {number} overlaps the one before it")
        out.extend(lines[position : start - 1])
        position = start - 1
        for kind, text in body:
            if kind in " -":
                if position >= len(lines) or lines[position].rstrip("\n") != text:
                    found = lines[position].rstrip("\n") if position < len(lines) else "<end>"
                    raise PatchError(
                        f"hunk at patch line {number} expects line {position + 1} of "
                        f"{old_name} to be {text!r}, but it is {found!r}"
                    )
                position += 1
            if kind in " +":
                out.append(text + "\n")
    out.extend(lines[position:])
    return "".join(out)


def rebase(old_base: str, new_base: str, patch: str, name: str, why: str | None = None) -> str:
    """`patch` (made on `old_base`) remade on `new_base`, with its description (or `why`).

    Each edit the patch makes must fall in lines that `old_base` and `new_base` share
    unchanged; PatchError names the first that does not.
    """
    old_mutant = apply(old_base, patch, "the old base")
    base_lines, new_lines = old_base.splitlines(True), new_base.splitlines(True)
    mutant_lines = old_mutant.splitlines(True)
    shared = difflib.SequenceMatcher(None, base_lines, new_lines, autojunk=False)
    moved: dict[int, int] = {}  # old_base line -> new_base line, for the lines both keep
    for tag, i1, i2, j1, _j2 in shared.get_opcodes():
        if tag == "equal":
            moved.update({i1 + k: j1 + k for k in range(i2 - i1)})
    edits = difflib.SequenceMatcher(None, base_lines, mutant_lines, autojunk=False)
    out, position = [], 0  # lines of new_base consumed so far
    for tag, i1, i2, j1, j2 in edits.get_opcodes():
        if tag == "equal":
            continue
        # the edit's own lines (or, for an insertion, the line it goes before) must be kept
        anchor = list(range(i1, i2)) if i2 > i1 else [i1]
        spots = [moved.get(i) for i in anchor] if i1 < len(base_lines) else [len(new_lines)]
        if None in spots or spots != list(range(spots[0], spots[0] + len(spots))):
            raise PatchError(f"the edit at line {i1 + 1} of the old base meets a changed line")
        start = spots[0]
        out.extend(new_lines[position:start])
        out.extend(mutant_lines[j1:j2])
        position = start + (i2 - i1)
    out.extend(new_lines[position:])
    return make(new_base, "".join(out), name, description(patch) if why is None else why)


def onto(old_base: str, variant: str, patch: str, variant_name: str) -> str:
    """`patch` (made on the solution `old_base`) remade on the correct variant `variant`, with a
    `base: <variant_name>` line in its description."""
    why = f"{description(patch)}\nbase: {variant_name}"
    return rebase(old_base, variant, patch, variant_name, why)


def description(patch: str) -> str:
    """The free text before the diff."""
    head = []
    for line in patch.splitlines():
        if line.startswith("--- "):
            break
        head.append(line)
    return "\n".join(head).strip()


def base(patch: str) -> str | None:
    """The file named by a `base: <file>` line of the description, or None (the solution)."""
    for line in description(patch).splitlines():
        match = _BASE.match(line.strip())
        if match:
            return match.group(1)
    return None


def _hunks(patch: str) -> list[tuple[int, list[tuple[str, str]], int]]:
    hunks: list[tuple[int, list[tuple[str, str]], int]] = []
    body: list[tuple[str, str]] | None = None
    for number, line in enumerate(patch.splitlines(), start=1):
        match = _HUNK.match(line)
        if match:
            old_start = int(match.group(1))
            # A hunk that only adds lines at the top says "-0,0": it starts before line 1.
            body = []
            hunks.append((old_start if match.group(2) != "0" else old_start + 1, body, number))
        elif body is not None and line[:1] in (" ", "-", "+"):
            body.append((line[0], line[1:]))
        elif body is not None and line == "":
            body.append((" ", ""))
        elif body is not None and line.startswith("\\"):
            continue  # "\ No newline at end of file"
    return hunks


def code_lines_apart(old: str, new: str, suffix: str = ".py") -> int | None:
    """How many lines of code differ between two sources, or None if one does not parse.

    Python sources are compared as `ast.unparse` prints them without docstrings, so comments,
    docstrings, blank lines and line breaks inside a statement do not count; other languages
    (CUDA C++) line by line without comments, blank lines and indentation. A changed line counts
    once.
    """
    lines = _code_lines if suffix == ".py" else _c_code_lines
    try:
        old_lines, new_lines = lines(old), lines(new)
    except (SyntaxError, ValueError):
        return None
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def _code_lines(source: str) -> list[str]:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree).splitlines()


def _c_code_lines(source: str) -> list[str]:
    from tutor.kernels.cuda.signature import without_comments

    return [
        " ".join(line.split()) for line in without_comments(source).splitlines() if line.strip()
    ]


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )
