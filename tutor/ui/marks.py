"""How progress reads in the app: a one-cell mark per drill status, and which drill comes next.

Pure functions of the catalogue and the progress store (no Textual), so they are tested alone
and the list, the help screen and the `n` key all agree.
"""

from __future__ import annotations

from tutor import progress as p
from tutor.catalogue import Catalogue, Drill

NOT_STARTED = "○"
FAILING = "✗"
PASSED_WITH_HINTS = "✓"
PASSED_CLEAN = "★"  # passed without revealing a single hint
RUNNING = "⋯"
COMING = "·"

LEGEND: tuple[tuple[str, str], ...] = (
    (NOT_STARTED, "not started"),
    (FAILING, "failing"),
    (PASSED_WITH_HINTS, "passed, with hints"),
    (PASSED_CLEAN, "passed without hints"),
    (RUNNING, "tests running"),
    (COMING, "coming later"),
)


def state_of(store: p.ProgressStore, drill_id: str) -> p.DrillProgress:
    """The drill's progress without adding an empty entry to the store."""
    return store.drills.get(drill_id) or p.DrillProgress()


def mark(state: p.DrillProgress) -> str:
    if state.status == p.PASSED:
        return PASSED_WITH_HINTS if state.solved_with_hints else PASSED_CLEAN
    if state.status == p.FAILING:
        return FAILING
    return NOT_STARTED


def playable(catalogue: Catalogue) -> list[Drill]:
    return [d for d in catalogue.drills if not d.coming]


def passed_count(catalogue: Catalogue, store: p.ProgressStore) -> tuple[int, int]:
    """(drills passed, drills playable)."""
    drills = playable(catalogue)
    return sum(state_of(store, d.id).status == p.PASSED for d in drills), len(drills)


def next_unfinished(
    catalogue: Catalogue, store: p.ProgressStore, after: str | None = None
) -> Drill | None:
    """The first drill not yet passed after `after`, wrapping round; None when all are passed."""
    drills = playable(catalogue)
    ids = [d.id for d in drills]
    start = ids.index(after) + 1 if after in ids else 0
    for drill in drills[start:] + drills[:start]:
        if drill.id != after and state_of(store, drill.id).status != p.PASSED:
            return drill
    return None
