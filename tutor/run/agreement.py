"""Claims one test makes that the run's other tests must bear out.

A test judges its own output alone, so a coincidence there can pass for a named mistake. A
persistent loop one row group short leaves the last rows unwritten, and on a test of 4 rows its
2 programs happen to stop where a grid of 2 programs would have: grid-too-small. But a grid that
is too small stops at a whole number of programs on *every* test that leaves an end of the output
unwritten. So when another test of the same run leaves an end unwritten where no grid would have
stopped, the claim is withdrawn: those tests keep their message and `where`, as a plain mismatch,
and their details say why the grid is not the cause.
"""

from __future__ import annotations

from tutor.course import diagnoses as dx
from tutor.lang.i18n import _
from tutor.run.results import TestResult

# The fact a failed comparison carries (tutor.harness.checks) when only an end of the output was
# never written (a flat suffix, or every index past one along an axis) and the rest is right:
# whether the launches of the call that made it can have stopped there.
END_UNWRITTEN = "end_unwritten"
GRID_STOPS, NO_GRID_STOPS = "grid-stops-here", "no-grid-stops-here"


def withdraw_unborne_claims(tests: list[TestResult]) -> None:
    """Turn the grid-too-small tests of a run into mismatches when another failed test leaves an
    end unwritten that its launch's programs cannot have stopped at, whatever it was named. Then,
    with no grid claim left, an output never written at all on one test is the same early stop
    on a smaller input: a mismatch too, so the run's first word is not "never written"."""
    ends = [t for t in tests if t.failed and t.facts.get(END_UNWRITTEN)]
    against = next((t for t in ends if t.facts[END_UNWRITTEN] == NO_GRID_STOPS), None)
    if against is None:
        return
    for test in ends:
        if test.diagnosis == dx.GRID_TOO_SMALL:
            test.diagnosis = dx.MISMATCH
            test.details = _(
                "The end of the output was never written and the rest is right, but the grid "
                "is not why: in {test} the output stops short where no whole number of the "
                "launched programs would stop. Something inside the kernel ends early: a "
                "loop's bound, or a mask."
            ).format(test=against.name)
    for test in tests:
        if test.failed and test.diagnosis == dx.OUTPUT_UNTOUCHED:
            test.diagnosis = dx.MISMATCH
            test.details = _(
                "Nothing of this output was written. In {test} all but the end was: the same "
                "early stop, on an input too small to write anything before it."
            ).format(test=against.name)
