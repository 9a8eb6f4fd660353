"""The hint engine: turns runs into progress and decides which hint stage the learner sees.

After a failing run the most specific diagnosis becomes the active one, and its first stage is
revealed by itself the first time it appears. Further stages come only on request, one at a
time. What was revealed is kept in the progress file, so the CLI and the app agree.

The stages fit the run: the first failed test with the active diagnosis gives its facts (how
many values are wrong, where, the pattern: tutor.harness.errormap; the way the mistake was
written, when the test told it apart), which are kept with the last run; the ladder's stages
for that way, else for that pattern, are shown, with the numbers filled in.
"""

from __future__ import annotations

from dataclasses import dataclass

from tutor.course import progress as p
from tutor.course.catalogue import Catalogue
from tutor.course.diagnoses import NOT_WRITTEN
from tutor.course.hints import HintBook, Ladder, fill, fitted
from tutor.run.results import RunResult
from tutor.states import DrillStatus, Outcome


@dataclass(frozen=True)
class HintView:
    """What the learner may see now for one drill's active diagnosis."""

    drill: str
    diagnosis: str
    title: str
    stages: tuple[str, ...]  # the revealed stages, in order, placeholders filled in
    exhausted: bool  # every stage is out
    note: str = ""  # why the hints are in English when another language was chosen

    @property
    def opens_solution(self) -> bool:
        """Whether this ladder, once exhausted, opens the solution (not-started never does)."""
        return self.diagnosis != NOT_WRITTEN


class Coach:
    def __init__(self, catalogue: Catalogue, store: p.ProgressStore) -> None:
        self.catalogue = catalogue
        self.store = store

    def book(self, drill_id: str) -> HintBook:
        return HintBook(self.catalogue.paths.hints_dir, drill_id)

    def record_run(self, result: RunResult) -> HintView | None:
        """Count a run of the learner's own file; reveal stage 1 of a new diagnosis."""
        with self.store.update():  # under the lock: runs finishing at once keep every count
            self._record(result)
        return self.current(result.drill)

    def _record(self, result: RunResult) -> None:
        state = self.store.drill(result.drill)
        state.runs += 1
        state.last_run = {
            "status": result.status,
            "diagnoses": result.diagnoses,
            "backend": result.backend,
            "at": p.now(),
            "passed_tests": sum(t.outcome == Outcome.PASSED for t in result.tests),
            "tests": len(result.tests),
            "facts": facts_of(result, result.diagnoses[0] if result.diagnoses else None),
        }
        if result.passed:
            state.passed_runs += 1
            if state.status != DrillStatus.PASSED:
                state.solved_at = p.now()
                state.solved_with_hints = state.hints_revealed > 0
            state.status = DrillStatus.PASSED
            state.active_diagnosis = None
        else:
            state.status = DrillStatus.FAILING  # a pass before is kept in solved_at
            state.active_diagnosis = result.diagnoses[0] if result.diagnoses else None
            if state.active_diagnosis and not state.hints.get(state.active_diagnosis):
                state.hints[state.active_diagnosis] = 1

    def current(self, drill_id: str) -> HintView | None:
        state = self.store.drill(drill_id)
        diagnosis = state.active_diagnosis
        if diagnosis is None:
            return None
        book = self.book(drill_id)
        ladder = book.ladder(diagnosis)
        shown = min(state.hints.get(diagnosis, 0), len(ladder.stages))
        facts = (state.last_run or {}).get("facts") or {}
        return self._view(drill_id, diagnosis, ladder, shown, facts, book.note)

    def _view(
        self, drill_id: str, diagnosis: str, ladder: Ladder, shown: int, facts: dict, note: str
    ) -> HintView:
        try:
            file = self.catalogue.drill(drill_id).file
        except KeyError:
            file = "<file>"
        stages = ladder.stages_for(facts.get("pattern"), facts.get("way"))
        return HintView(
            drill_id,
            diagnosis,
            fill(ladder.title, drill_id, file, facts),
            tuple(fitted(fill(stage, drill_id, file, facts), facts) for stage in stages[:shown]),
            shown >= len(stages),
            note,
        )

    def preview(self, drill_id: str, diagnosis: str, result: RunResult | None = None) -> HintView:
        """The first stage for `diagnosis` (fitted to `result`, the run that found it), shown
        for a file other than the learner's own and remembered nowhere."""
        book = self.book(drill_id)
        ladder = book.ladder(diagnosis)
        facts = facts_of(result, diagnosis) if result is not None else {}
        return self._view(drill_id, ladder.diagnosis, ladder, 1, facts, book.note)

    def reveal_next(self, drill_id: str) -> HintView | None:
        """Reveal one more stage of the active diagnosis (none when there is no failure)."""
        with self.store.update():
            view = self.current(drill_id)
            if view is None or view.exhausted:
                return view
            self.store.drill(drill_id).hints[view.diagnosis] = len(view.stages) + 1
        return self.current(drill_id)

    def forget_run(self, drill_id: str) -> None:
        """The learner's file went back to its starter: the last run no longer describes it.
        Runs counted, hints revealed and a pass (solved_at) are kept."""
        if not self.store.path.exists():
            return
        with self.store.update() as store:  # under the lock: a run finishing now loses nothing
            state = store.drills.get(drill_id)
            if state is not None:
                state.status = DrillStatus.NOT_STARTED
                state.last_run = None
                state.active_diagnosis = None

    def solution_unlocked(self, drill_id: str) -> bool:
        """The solution opens after a pass, or once the last stage of a real mistake's ladder
        is out; the not-started ladder (an untouched starter) never opens it."""
        state = self.store.drills.get(drill_id)
        if state is None:
            return False
        if state.solved:
            return True
        book = self.book(drill_id)
        return any(
            diagnosis != NOT_WRITTEN and shown >= len(book.ladder(diagnosis).stages)
            for diagnosis, shown in state.hints.items()
        )


def facts_of(result: RunResult, diagnosis: str | None) -> dict:
    """The facts of the first failed test that `diagnosis` came from (none when no test of the
    run has any: an error before any comparison)."""
    for test in result.tests:
        if test.failed and test.diagnosis == diagnosis and test.facts:
            return dict(test.facts)
    return {}
