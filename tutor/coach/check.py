"""One check of a drill as the learner meets it, the same from the command line and the app:
run the tests, name the ones a run cut short never reached, record the run of the learner's
own file and fit its hint.

    checked = check(runner, coach, "t3", "mine", list_tests=collect.lister(catalogue))
    checked.to_json()  # what `tutor check --json` prints

The app runs the tests in a worker thread (`run_tests`) and records on its main thread
(`record`), where its panels read the progress store; `check` does both in turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from tutor.coach.run_hints import Coach, HintView
from tutor.run.results import RunResult
from tutor.states import RunStatus

# The ids of a drill's tests (drill id, impl), for naming the ones a run cut short never
# reached (None: unknown). tutor.run.collect.lister makes the real one.
TestLister = Callable[[str, str], "list[str] | None"]

# Runs whose missing tests are named: the rest either ran every test or none of them.
CUT_SHORT = (RunStatus.TIMEOUT, RunStatus.CRASHED)
# Runs that say nothing about the learner's file: they are not recorded in the progress.
NOT_RECORDED = (RunStatus.SETUP_ERROR, RunStatus.UNTRUSTED)


class DrillRunner(Protocol):
    """What a check needs of a runner (tutor.run.runner.Runner, or a fake in tests)."""

    def run(
        self,
        drill_id: str,
        impl: str = "mine",
        *,
        on_event: Callable[[Any], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> RunResult: ...


@dataclass
class CheckedRun:
    result: RunResult
    impl: str = "mine"
    """The file asked for: mine, solutions, or a path. Only a run of mine is recorded."""
    all_tests: list[str] | None = None
    """Every test id of the drill, listed when the run was cut short."""
    hint: HintView | None = field(default=None, compare=False)
    """The hint to show: the learner's, once recorded; for another file, a first stage."""
    recorded: bool = False
    not_saved: OSError | None = field(default=None, compare=False)
    """Why the run of the learner's file is not in the progress file (a full disk)."""

    @property
    def never_ran(self) -> list[str]:
        """The names of the tests the run never reached, in the drill's order."""
        if not self.all_tests:
            return []
        seen = {t.name for t in self.result.tests}
        names = [i.split("::")[-1] for i in self.all_tests]
        return [name for name in names if name not in seen]

    def to_json(self) -> dict[str, Any]:
        """The object `tutor check --json` prints (DESIGN.md's contract: its keys stay)."""
        result = self.result
        return {
            "drill": result.drill,
            "passed": result.passed,
            "backend": result.backend,
            "device_name": result.device_name,
            "status": result.status,
            "impl": result.impl,
            "tests": [t.to_json() for t in result.tests],
            "diagnoses": result.diagnoses,
            "hint": asdict(self.hint) if self.hint else None,
            "message": result.message,
            "duration": result.duration,
            "runner": "warm" if result.warm else "cold",
            "never_ran": self.never_ran,
        }


def run_tests(
    runner: DrillRunner,
    drill_id: str,
    impl: str = "mine",
    *,
    list_tests: TestLister | None = None,
    on_event: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
) -> CheckedRun:
    """Run the drill's tests on `impl`; when the run was cut short, list every test too.

    A runner that fails (not the learner's code: that runs in a child) gives a set-up error
    that says so, never a traceback."""
    try:
        result = runner.run(drill_id, impl, on_event=on_event, cancel=cancel)
    except Exception as exc:  # noqa: BLE001 - reported as the run's status
        result = RunResult(
            drill=drill_id,
            impl=impl,
            status=RunStatus.SETUP_ERROR,
            message=f"the tutor could not run the tests: {exc}",
        )
    all_tests = None
    if result.status in CUT_SHORT and list_tests is not None:
        try:
            all_tests = list_tests(drill_id, impl)
        except Exception:  # noqa: BLE001 - naming the missing tests is a courtesy; the verdict stands
            all_tests = None
    return CheckedRun(result, impl, all_tests)


def record(coach: Coach, checked: CheckedRun) -> CheckedRun:
    """Count a run of the learner's own file (one that started, and whose results could be
    trusted) and fit its hint; for any other file, show the first stage of its diagnosis and
    remember nothing."""
    result, hint, recorded, not_saved = checked.result, None, False, None
    if checked.impl == "mine" and result.status not in NOT_RECORDED:
        try:
            hint, recorded = coach.record_run(result), True
        except OSError as exc:  # a full disk: the verdict is still worth showing
            not_saved = exc
    if not recorded and result.diagnoses:
        hint = coach.preview(result.drill, result.diagnoses[0], result)
    return replace(checked, hint=hint, recorded=recorded, not_saved=not_saved)


def check(
    runner: DrillRunner,
    coach: Coach,
    drill_id: str,
    impl: str = "mine",
    *,
    list_tests: TestLister | None = None,
    on_event: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
) -> CheckedRun:
    """`run_tests`, then `record`."""
    checked = run_tests(
        runner, drill_id, impl, list_tests=list_tests, on_event=on_event, cancel=cancel
    )
    return record(coach, checked)
