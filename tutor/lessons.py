"""Lessons as the learner reads them: self-check answers folded away until asked for.

A lesson writes each answer in `<details><summary>Answer</summary> ... </details>`. Neither a
terminal nor the app's Markdown view folds HTML, so the answers would sit right under their
questions; here each one is replaced by a line that says how to show it, or, once asked for,
shown as a quote under its question.
"""

from __future__ import annotations

import re

_DETAILS = re.compile(
    r"<details>\s*<summary>(?P<summary>.*?)</summary>(?P<body>.*?)</details>", re.DOTALL
)


def render(text: str, *, answers: bool, how_to_show: str) -> str:
    """`text` with every `<details>` block folded (a line naming `how_to_show`) or shown."""

    def one(match: re.Match[str]) -> str:
        summary = match.group("summary").strip() or "Answer"
        if not answers:
            return f"*({summary} folded away: {how_to_show}.)*"
        body = match.group("body").strip()
        quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in body.splitlines())
        return f"> **{summary}**\n>\n{quoted}"

    return _DETAILS.sub(one, text)


def count_answers(text: str) -> int:
    return len(_DETAILS.findall(text))
