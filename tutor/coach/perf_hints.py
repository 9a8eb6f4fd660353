"""The perf coach's hints: a bench of the learner's file becomes a perf diagnosis to work on.

    coach = PerfCoach(catalogue, store)
    view = coach.record_bench(report)    # after `tutor bench` of the learner's own file
    view = coach.reveal_next("t3")       # `tutor hint t3 --perf`, or `h` on the Bench tab

Like the correctness hints (tutor.coach.run_hints): the first perf diagnosis of the first case that
has one becomes the drill's active one, its first stage is revealed by itself, further stages come
one at a time on request, and both are kept in the progress file (`perf`, `perf_hints`), so the
CLI and the app agree. The ladders are the hint files' (hints/common.yaml, hints/<drill>.yaml),
with `<name>` filled in from the numbers the bench measured for that diagnosis (and `<drill>`,
`<file>` as in every hint, tutor.course.hints.fill).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tutor.bench.rules import shown
from tutor.course import progress as p
from tutor.course.catalogue import Catalogue
from tutor.course.hints import HintBook, fill

NUMBER = re.compile(r"<([a-z][a-z0-9]*_[a-z0-9_]*|[a-z]+)>")


@dataclass(frozen=True)
class PerfView:
    """What the learner may see now of the drill's active perf diagnosis."""

    drill: str
    diagnosis: str
    title: str
    case: str  # the bench case it was found at
    text: str  # the finding, with its numbers
    stages: tuple[str, ...]  # the revealed stages, numbers filled in
    exhausted: bool
    numbers: dict[str, Any] = field(default_factory=dict)


def fill_numbers(text: str, numbers: dict[str, Any]) -> str:
    """`<n_regs>` -> the measured value (a word among them, `<limiter>`, in the learner's
    language). A name the bench measured but left empty reads "?"; other angle-bracket names
    are left for tutor.course.hints.fill (`<drill>`, `<count>`)."""

    def number(match: re.Match) -> str:
        name = match.group(1)
        if name not in numbers:
            return match.group(0)
        return "?" if numbers[name] is None else shown(numbers[name])

    return NUMBER.sub(number, text)


def first_finding(report: Any) -> tuple[str, dict[str, Any]] | None:
    """(case label, finding) of the first timed case with a perf diagnosis, or None."""
    for row in report.rows:
        if row.perf:
            return row.short_label, row.perf[0]
    return None


class PerfCoach:
    def __init__(self, catalogue: Catalogue, store: p.ProgressStore) -> None:
        self.catalogue = catalogue
        self.store = store

    def record_bench(self, report: Any) -> PerfView | None:
        """Keep the bench of the learner's own file; reveal stage 1 of a new perf diagnosis.
        A bench with no perf diagnosis (at the reference) clears the active one."""
        if not report.timed:
            return self.current(report.drill)
        found = first_finding(report)
        with self.store.update():
            state = self.store.drill(report.drill)
            if found is None:
                state.perf = None
            else:
                case, finding = found
                state.perf = {
                    "case": case,
                    "diagnosis": finding["id"],
                    "text": finding["text"],
                    "numbers": finding.get("numbers", {}),
                    "at": p.now(),
                }
                state.perf_hints.setdefault(finding["id"], 1)
        return self.current(report.drill)

    def current(self, drill_id: str) -> PerfView | None:
        state = self.store.drill(drill_id)
        if not state.perf:
            return None
        diagnosis = state.perf["diagnosis"]
        ladder = HintBook(self.catalogue.paths.hints_dir, drill_id).ladder(diagnosis)
        numbers = state.perf.get("numbers") or {}
        shown = min(state.perf_hints.get(diagnosis, 0), len(ladder.stages))
        return PerfView(
            drill_id,
            diagnosis,
            ladder.title,
            state.perf.get("case", ""),
            state.perf.get("text", ""),
            tuple(self._filled(drill_id, stage, numbers) for stage in ladder.stages[:shown]),
            shown >= len(ladder.stages),
            numbers,
        )

    def _filled(self, drill_id: str, stage: str, numbers: dict[str, Any]) -> str:
        try:
            file = self.catalogue.drill(drill_id).file
        except KeyError:
            file = "<file>"
        return fill(fill_numbers(stage, numbers), drill_id, file)

    def reveal_next(self, drill_id: str) -> PerfView | None:
        """One more stage of the active perf diagnosis (none when the last bench had none)."""
        with self.store.update():
            view = self.current(drill_id)
            if view is None or view.exhausted:
                return view
            self.store.drill(drill_id).perf_hints[view.diagnosis] = len(view.stages) + 1
        return self.current(drill_id)
