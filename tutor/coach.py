"""The hint engine: turns runs into progress and decides which hint stage the learner sees.

After a failing run the most specific diagnosis becomes the active one, and its first stage is
revealed by itself the first time it appears. Further stages come only on request, one at a
time. What was revealed is kept in the progress file, so the CLI and the app agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from tutor import progress as p
from tutor.catalogue import Catalogue
from tutor.hints import HintBook
from tutor.results import RunResult


@dataclass(frozen=True)
class HintView:
    """What the learner may see now for one drill's active diagnosis."""

    drill: str
    diagnosis: str
    title: str
    stages: tuple[str, ...]  # the revealed stages, in order
    exhausted: bool  # every stage is out


class Coach:
    def __init__(self, catalogue: Catalogue, store: p.ProgressStore) -> None:
        self.catalogue = catalogue
        self.store = store

    def book(self, drill_id: str) -> HintBook:
        return HintBook(self.catalogue.paths.hints_dir, drill_id)

    def record_run(self, result: RunResult) -> HintView | None:
        """Count a run of the learner's own file; reveal stage 1 of a new diagnosis."""
        self.store.reload()
        state = self.store.drill(result.drill)
        state.runs += 1
        state.last_run = {
            "status": result.status,
            "diagnoses": result.diagnoses,
            "backend": result.backend,
            "at": p.now(),
            "passed_tests": sum(t.outcome == "passed" for t in result.tests),
            "tests": len(result.tests),
        }
        if result.passed:
            state.passed_runs += 1
            if state.status != p.PASSED:
                state.solved_at = p.now()
                state.solved_with_hints = state.hints_revealed > 0
            state.status = p.PASSED
            state.active_diagnosis = None
        else:
            if state.status != p.PASSED:
                state.status = p.FAILING
            state.active_diagnosis = result.diagnoses[0] if result.diagnoses else None
            if state.active_diagnosis and not state.hints.get(state.active_diagnosis):
                state.hints[state.active_diagnosis] = 1
        self.store.save()
        return self.current(result.drill)

    def current(self, drill_id: str) -> HintView | None:
        state = self.store.drill(drill_id)
        diagnosis = state.active_diagnosis
        if diagnosis is None:
            return None
        ladder = self.book(drill_id).ladder(diagnosis)
        shown = min(state.hints.get(diagnosis, 0), len(ladder.stages))
        return HintView(
            drill_id, diagnosis, ladder.title, ladder.stages[:shown], shown >= len(ladder.stages)
        )

    def preview(self, drill_id: str, diagnosis: str) -> HintView:
        """The first stage for `diagnosis`, shown for a file other than the learner's own and
        remembered nowhere."""
        ladder = self.book(drill_id).ladder(diagnosis)
        return HintView(
            drill_id, ladder.diagnosis, ladder.title, ladder.stages[:1], len(ladder.stages) <= 1
        )

    def reveal_next(self, drill_id: str) -> HintView | None:
        """Reveal one more stage of the active diagnosis (none when there is no failure)."""
        self.store.reload()
        view = self.current(drill_id)
        if view is None or view.exhausted:
            return view
        state = self.store.drill(drill_id)
        state.hints[view.diagnosis] = len(view.stages) + 1
        self.store.save()
        return self.current(drill_id)

    def solution_unlocked(self, drill_id: str) -> bool:
        """The solution is shown after a pass, or once the last stage of a hint is out."""
        state = self.store.drill(drill_id)
        view = self.current(drill_id)
        return state.status == p.PASSED or (view is not None and view.exhausted)
