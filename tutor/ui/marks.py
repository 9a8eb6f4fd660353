"""How progress reads in the app: a one-cell mark per drill status, and which drill comes next.

Pure functions of the catalogue and the progress store (no Textual), so they are tested alone
and the list, the help screen and the `n` key all agree.
"""

from __future__ import annotations

from tutor.course import progress as p
from tutor.course.catalogue import Catalogue, Drill
from tutor.lang.i18n import N_
from tutor.states import DrillStatus

NOT_STARTED = "○"
FAILING = "✗"
PASSED_WITH_HINTS = "✓"
PASSED_CLEAN = "★"  # passed without revealing a single hint
REGRESSED = "!"  # passed before, and the last run fails
RUNNING = "⋯"
COMING = "·"

LEGEND: tuple[tuple[str, str], ...] = (
    (NOT_STARTED, N_("not started")),
    (FAILING, N_("failing")),
    (PASSED_WITH_HINTS, N_("passed, with hints")),
    (PASSED_CLEAN, N_("passed without hints")),
    (REGRESSED, N_("passed before, failing now")),
    (RUNNING, N_("tests running")),
    (COMING, N_("coming later")),
)


def state_of(store: p.ProgressStore, drill_id: str) -> p.DrillProgress:
    """The drill's progress without adding an empty entry to the store."""
    return store.drills.get(drill_id) or p.DrillProgress()


def mark(state: p.DrillProgress) -> str:
    """The last run decides the mark, except that a drill once solved keeps its star or tick
    until a run fails (a reset leaves the pass on show: the file is new, the pass was real)."""
    if state.regressed:
        return REGRESSED
    if state.solved:
        return PASSED_WITH_HINTS if state.solved_with_hints else PASSED_CLEAN
    if state.status == DrillStatus.FAILING:
        return FAILING
    return NOT_STARTED


def playable(catalogue: Catalogue) -> list[Drill]:
    return [d for d in catalogue.drills if not d.coming]


def passed_count(catalogue: Catalogue, store: p.ProgressStore) -> tuple[int, int]:
    """(drills solved, drills playable): a drill passed once counts, whatever its last run."""
    drills = playable(catalogue)
    return sum(state_of(store, d.id).solved for d in drills), len(drills)


def next_unfinished(
    catalogue: Catalogue, store: p.ProgressStore, after: str | None = None
) -> Drill | None:
    """The first drill not yet solved after `after`, wrapping round; None when all are."""
    drills = playable(catalogue)
    ids = [d.id for d in drills]
    start = ids.index(after) + 1 if after in ids else 0
    for drill in drills[start:] + drills[:start]:
        if drill.id != after and not state_of(store, drill.id).solved:
            return drill
    return None


def in_progress(catalogue: Catalogue, store: p.ProgressStore) -> Drill | None:
    """The drill the learner is on, as rustlings has a current exercise: the drill run last
    while it is not solved, else the next one not yet solved after it (the first, before any
    run); None when every drill is solved."""
    ran = [d for d in playable(catalogue) if (state_of(store, d.id).last_run or {}).get("at")]
    if not ran:
        return next_unfinished(catalogue, store)
    last = max(ran, key=lambda d: str(state_of(store, d.id).last_run["at"]))
    return (
        last if not state_of(store, last.id).solved else next_unfinished(catalogue, store, last.id)
    )
