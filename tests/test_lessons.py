"""Lessons fold their self-check answers until the learner asks for them."""

from __future__ import annotations

from tutor.course import lessons

LESSON = """## Check yourself

1. Why is BLOCK a power of two?

   <details><summary>Answer</summary>

   `tl.arange` only makes power-of-two lengths.

   </details>

2. Why a mask?

<details>
<summary>Hint, then answer</summary>
The last block runs past the end.
</details>
"""


def test_answers_are_folded_with_a_line_saying_how_to_show_them():
    folded = lessons.render(LESSON, answers=False, how_to_show="press a")
    assert "power-of-two lengths" not in folded and "runs past the end" not in folded
    assert folded.count("folded away: press a") == 2
    assert "*(Hint, then answer folded away: press a.)*" in folded
    assert "1. Why is BLOCK a power of two?" in folded and "<details>" not in folded


def test_answers_shown_are_quotes_under_their_questions():
    shown = lessons.render(LESSON, answers=True, how_to_show="press a")
    assert "> `tl.arange` only makes power-of-two lengths." in shown
    assert "> **Hint, then answer**" in shown and "<summary>" not in shown
    assert lessons.count_answers(LESSON) == 2


def test_every_lesson_is_headed_the_same_way(catalogue):
    """The app shows each lesson under its first line: one form for all ("T4 — ...")."""
    for drill in catalogue.drills:
        path = catalogue.paths.lesson(drill.id)
        if path.is_file():
            heading = path.read_text(encoding="utf-8").splitlines()[0]
            assert heading.startswith(f"# {drill.id.upper()} — "), f"{path.name}: {heading}"
