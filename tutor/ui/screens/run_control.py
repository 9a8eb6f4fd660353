"""Running a drill from the drill screen: a thread worker per run, results streamed as messages.

A new run cancels the one in progress (its cancel event makes the runner kill the child's process
group), and every message carries the run's token so a replaced run's late news is dropped. A
hang or a crash comes back as a RunResult status; a runner that raises becomes a failed result.
"""

from __future__ import annotations

import threading

from textual import work
from textual.worker import Worker, WorkerState

from tutor import results as r
from tutor.events import Event, SessionStarted, TestStarted
from tutor.ui.environment import CPU_BACKEND, backend_label
from tutor.ui.live import LiveRun
from tutor.ui.messages import BackendFound, RunEvent, RunFinished, RunStarted
from tutor.ui.widgets.code_view import CodeView
from tutor.ui.widgets.run_panel import summary
from tutor.ui.widgets.status_bar import StatusBar
from tutor.yamlfile import YamlFileError


class RunControl:
    """Mixed into DrillScreen, whose `tutor`, `selected` and `_show_*` helpers it uses."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._live_runs: dict[str, LiveRun] = {}  # drill -> the run now streaming in
        self._finished_runs: dict[str, LiveRun] = {}  # drill -> its last finished run
        self._run_token = 0  # numbers runs, so a replaced run's late messages are dropped
        self._run_cancel: threading.Event | None = None  # stops the run in progress
        self._run_of_worker: dict[Worker, tuple[str, int]] = {}

    def start_run(self, drill_id: str) -> None:
        """Run the learner's file; a run still in progress is cancelled first."""
        if self._run_cancel is not None:
            self._run_cancel.set()
        self._run_token += 1
        self._run_cancel = threading.Event()
        self._live_runs[drill_id] = LiveRun(drill_id, self._run_token)
        self.post_message(RunStarted(drill_id, self._run_token))
        worker = self._run_worker(drill_id, self._run_token, self._run_cancel)
        self._run_of_worker[worker] = (drill_id, self._run_token)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run")
    def _run_worker(self, drill_id: str, token: int, cancel: threading.Event) -> None:
        def forward(event: Event) -> None:
            self.post_message(RunEvent(drill_id, token, event))

        result = self.tutor.runner.run(drill_id, "mine", on_event=forward, cancel=cancel)
        self.post_message(RunFinished(drill_id, token, result))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "run" or event.state not in (
            WorkerState.ERROR,
            WorkerState.SUCCESS,
            WorkerState.CANCELLED,
        ):
            return
        drill_id, token = self._run_of_worker.pop(event.worker, (None, 0))
        if event.state == WorkerState.ERROR and drill_id is not None:
            # The runner itself failed (not the learner's code): say so instead of freezing.
            failed = r.RunResult(
                drill=drill_id,
                impl="mine",
                status=r.SETUP_ERROR,
                message=f"the tutor could not run the tests: {event.worker.error}",
            )
            self.post_message(RunFinished(drill_id, token, failed))

    def on_run_started(self, message: RunStarted) -> None:
        self.query_one(StatusBar).activity = f"{message.drill_id}: running the tests…"
        self._refresh_marks()
        if message.drill_id == self.selected:
            self._show_run(message.drill_id)

    def on_run_event(self, message: RunEvent) -> None:
        live = self._live_runs.get(message.drill_id)
        if live is None or live.token != message.token:
            return
        live.feed(message.event)
        if isinstance(message.event, SessionStarted):
            self.post_message(
                BackendFound(
                    backend_label(live.backend, live.device_name),
                    on_gpu=live.backend not in ("", CPU_BACKEND),
                )
            )
        elif isinstance(message.event, TestStarted):
            name = message.event.id.split("::")[-1]
            self.query_one(StatusBar).activity = f"{message.drill_id}: {name}"
        if message.drill_id == self.selected:
            self._show_run(message.drill_id)

    def on_run_finished(self, message: RunFinished) -> None:
        drill_id, result = message.drill_id, message.result
        live = self._live_runs.get(drill_id)
        if live is None or live.token != message.token:
            return  # a replaced run reporting late
        del self._live_runs[drill_id]
        if result.status == r.CANCELLED:
            self._refresh_marks()
            return
        live.finish(result)
        self._finished_runs[drill_id] = live
        try:
            self.tutor.coach.record_run(result)
        except (OSError, YamlFileError) as exc:
            self._say(f"Could not record the run: {exc}", severity="error")
        self.query_one(StatusBar).activity = f"{drill_id}: {summary(live)[0]}"
        self._refresh_marks()
        if drill_id == self.selected:
            self._show_run(drill_id)
            self._show_coach(drill_id)
            self.query_one(CodeView).reload()
