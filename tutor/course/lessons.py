"""Lessons as the learner reads them: self-check answers folded away until asked for.

A lesson writes each answer in `<details><summary>Answer</summary> ... </details>`. Neither a
terminal nor the app's Markdown view folds HTML, so the answers would sit right under their
questions; here each one is replaced by a line that says how to show it, or, once asked for,
shown as a quote under its question.
"""

from __future__ import annotations

import re
import textwrap

from tutor.lang.i18n import _

_DETAILS = re.compile(
    r"(?P<indent>[ \t]*)<details>\s*<summary>(?P<summary>.*?)</summary>(?P<body>.*?)</details>",
    re.DOTALL,
)


def render(text: str, *, answers: bool, how_to_show: str) -> str:
    """`text` with every `<details>` block folded (a line naming `how_to_show`) or shown."""

    def one(match: re.Match[str]) -> str:
        indent = match.group("indent")
        summary = match.group("summary").strip() or _("Answer")
        if not answers:
            folded = _("{summary} folded away: {how}.").format(summary=summary, how=how_to_show)
            return f"{indent}*({folded})*"
        body = textwrap.dedent(match.group("body").strip("\n")).strip()
        lines = [f"**{summary}**", "", *body.splitlines()]
        return "\n".join(f"{indent}> {line}".rstrip() for line in lines)

    return _DETAILS.sub(one, text)


def count_answers(text: str) -> int:
    return len(_DETAILS.findall(text))
