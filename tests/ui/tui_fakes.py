"""A scripted runner for the app's tests: streams events like the real one, returns a RunResult.

    runner = FakeRunner()
    runner.script("a1", Scripted([("test_tail", "failed", "missing-tail-mask")]))

A drill with no script left gets a passing run of one test. `Scripted.hold_after` makes the run
wait for `runner.release` after that many tests (to see results arrive one by one); `hang`
makes it run until cancelled, like a kernel that never ends.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

from tutor.course import diagnoses as dx
from tutor.run import results as r
from tutor.run.events import decode
from tutor.states import RunStatus


@dataclass
class Scripted:
    tests: list[tuple[str, str, str | None]] = field(
        default_factory=lambda: [("test_ok", "passed", None)]
    )  # (name, outcome, diagnosis)
    status: str | None = None  # default: passed when every test passed, else failed
    message: str = ""
    hold_after: int | None = None
    hang: bool = False
    raises: Exception | None = None


def failing(diagnosis: str = "missing-tail-mask") -> Scripted:
    return Scripted([("test_small", "passed", None), ("test_tail[1000]", "failed", diagnosis)])


@dataclass
class Call:
    drill_id: str
    impl: str
    cancel: threading.Event | None


class FakeRunner:
    def __init__(self) -> None:
        self.scripts: dict[str, list[Scripted]] = {}
        self.calls: list[Call] = []
        self.release = threading.Event()
        self.started = threading.Event()  # set when a held or hanging run reaches its wait

    def script(self, drill_id: str, *runs: Scripted) -> None:
        self.scripts.setdefault(drill_id, []).extend(runs)

    def run(self, drill_id, impl="mine", *, on_event=None, cancel=None) -> r.RunResult:
        self.calls.append(Call(drill_id, impl, cancel))
        queue = self.scripts.get(drill_id)
        plan = queue.pop(0) if queue else Scripted()

        def emit(raw: dict) -> None:  # as the real runner does: decoded, then forwarded
            if on_event is not None:
                on_event(decode(json.dumps(raw)))

        if plan.raises is not None:
            raise plan.raises
        result = r.RunResult(
            drill=drill_id,
            impl=impl,
            status=RunStatus.PASSED,
            backend="cpu-interpreter",
            device_name="CPU (Triton interpreter)",
            duration=1.23,
        )
        emit(
            {"event": "session_start", "backend": result.backend, "device_name": result.device_name}
        )
        for n, (name, outcome, diagnosis) in enumerate(plan.tests):
            node = f"drills/tests/test_{drill_id}.py::{name}"
            emit({"event": "test_start", "id": node})
            if plan.hang and n == len(plan.tests) - 1:
                self.started.set()
                while not (cancel and cancel.wait(0.02)):
                    pass
                result.status, result.message = RunStatus.CANCELLED, "replaced by a newer run"
                return result
            message = "y: 3 of 300 values differ; worst at [2, 99]" if outcome == "failed" else ""
            test = r.TestResult(node, outcome, diagnosis, message, line=None, duration=0.01)
            result.tests.append(test)
            emit(
                {
                    "event": "test",
                    "id": node,
                    "outcome": outcome,
                    "diagnosis": diagnosis,
                    "message": message,
                    "details": "",
                    "line": None,
                    "duration": 0.01,
                }
            )
            if plan.hold_after == n + 1:
                self.started.set()
                self.release.wait(10)
        emit({"event": "session_end", "exitstatus": 0})
        failed = [t.diagnosis for t in result.tests if t.failed and t.diagnosis]
        result.diagnoses = dx.most_specific_first(failed)
        if plan.status is not None:
            result.status = plan.status
            # The real runner names a hang or a crash as a diagnosis of its own.
            extra = {RunStatus.TIMEOUT: dx.KERNEL_HANG, RunStatus.CRASHED: dx.PROCESS_CRASHED}.get(
                plan.status
            )
            result.diagnoses = dx.most_specific_first(failed + ([extra] if extra else []))
        elif any(t.failed for t in result.tests):
            result.status = RunStatus.FAILED
        result.message = plan.message
        return result
