"""Whether a run's events are its tests' own: the tests it collected, run in order, each once,
and an end that agrees with them.

The plugin seals every line (tutor.run.seal), but the learner's code runs in the plugin's own
process and can find its writer in memory (gc.get_objects, sys.modules): it could report "13
passed" without running a kernel. What it cannot change is what was sent before it ran: the
plugin sends the ids of the tests collected (`Collected`) when collection finishes, and the
learner's file is imported only after that, when the first test sets up (the drill plugin's
`impl` fixture). So every event after that list must keep to it:

- the tests start in the collected order, each once, and each finishes before the next starts;
- a result is for the test that is running;
- the session ends with no test running and, when it says the tests ran (exit status 0 or 1),
  every collected test finished, with the status the results give (1 when one failed, else 0),
  which is also the process's exit code;
- nothing comes after the session's end.

A run that breaks one of these could not be trusted (RunStatus.UNTRUSTED), and nothing of it is
recorded. What this cannot catch is code that replays the plugin's own calls in the right order
and then ends the process: nothing inside that process can tell those calls from the plugin's.
The checks cost a comparison per event.
"""

from __future__ import annotations

from dataclasses import dataclass

from tutor.lang.i18n import _

# pytest's exit statuses for a session whose tests ran: all passed, some failed.
_RAN = (0, 1)


def _name(test_id: str) -> str:
    return test_id.split("::")[-1]


@dataclass
class Ledger:
    """The rules above, applied event by event; `broken` is the first one broken ("" if none)."""

    collected: list[str] | None = None
    started: int = 0  # how many of the collected tests have started
    running: str | None = None
    failed: bool = False  # whether a result said failed
    exitstatus: int | None = None  # the session's, once it ended
    broken: str = ""

    def _judge(self, why: str) -> None:
        if why and not self.broken:
            self.broken = why

    def _after_the_end(self) -> bool:
        if self.exitstatus is not None:
            self._judge(_("an event came after the test session ended"))
        return self.exitstatus is not None

    def collected_tests(self, ids: list[str]) -> None:
        if self._after_the_end():
            return
        if self.collected is not None or self.started:
            self._judge(_("the list of collected tests came twice"))
            return
        self.collected = list(ids)

    def test_started(self, test_id: str) -> None:
        if self._after_the_end():
            return
        collected = self.collected or []
        if self.running is not None:
            why = _("{test} started while {running} was still running").format(
                test=_name(test_id), running=_name(self.running)
            )
        elif test_id not in collected:
            why = _("{test} started, a test the run never collected").format(test=_name(test_id))
        elif self.started >= len(collected) or collected[self.started] != test_id:
            why = _("{test} started out of the collected order").format(test=_name(test_id))
        else:
            why = ""
        self._judge(why)
        self.started += 1
        self.running = test_id

    def test_finished(self, test_id: str, failed: bool) -> None:
        if self._after_the_end():
            return
        if test_id != self.running:
            self._judge(
                _("a result came for {test}, which was not running").format(test=_name(test_id))
            )
        self.running = None
        self.failed |= failed

    def session_ended(self, exitstatus: int) -> None:
        if self._after_the_end():
            return
        self.exitstatus = exitstatus
        count = len(self.collected or [])
        if self.running is not None:
            self._judge(
                _("the test session ended while {test} was running").format(
                    test=_name(self.running)
                )
            )
        elif exitstatus in _RAN and self.started != count:
            self._judge(
                _("{done} tests reported, where {count} were collected").format(
                    done=self.started, count=count
                )
            )
        elif exitstatus == 0 and self.failed:
            self._judge(_("the test session ended with exit status 0, but a test failed"))
        elif exitstatus == 1 and not self.failed:
            self._judge(_("the test session ended with exit status 1, but no test failed"))

    def verdict(self, returncode: int) -> str:
        """Why the run's results cannot be trusted, given the exit code its process ended
        with ("" when they can)."""
        if self.broken:
            return self.broken
        if self.exitstatus in _RAN and returncode != self.exitstatus:
            return _(
                "the test session ended with exit status {status}, its process with {code}"
            ).format(status=self.exitstatus, code=returncode)
        return ""
