"""What the app knows about runs, benches and its own writes, in one Textual-free object.

Like rustlings' AppState: the drill screen asks the session which run is live for a drill, which
finished run to show, whether a late message belongs to a run that was replaced, what the bench
printed, and whether a file change is the app's own. The screen turns the answers into widget
updates; the session never touches a widget, so it is tested alone (tests/ui/test_session.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.run.events import Event
from tutor.run.results import RunResult
from tutor.states import RunStatus
from tutor.ui.live import LiveRun

BENCH_LINES_KEPT = 200


@dataclass
class RunTicket:
    """What a worker needs to run one drill: which, its token, and the event that stops it."""

    drill_id: str
    token: int
    cancel: threading.Event


@dataclass
class Session:
    """Runs (live and finished, per drill), the bench, and the files the app wrote itself."""

    clock: Callable[[], float] = time.monotonic
    live: dict[str, LiveRun] = field(default_factory=dict)
    """drill -> the run streaming in now (at most one drill has one: a new run replaces it)."""
    finished: dict[str, LiveRun] = field(default_factory=dict)
    """drill -> its last finished run this session (cleared by a reset)."""
    started_at: dict[str, float] = field(default_factory=dict)
    """drill -> when its live run started (the clock's seconds)."""
    token: int = 0
    """The newest run's number; messages of older runs are dropped."""
    run_cancel: threading.Event | None = None
    bench_drill: str | None = None
    """The drill being timed now."""
    bench_cancel: threading.Event | None = None
    bench_lines: dict[str, list[str]] = field(default_factory=dict)
    """drill -> what its last bench printed (or its report)."""
    written_by_app: dict[Path, str] = field(default_factory=dict)
    """Files the app wrote (a starter copied, a reset), with the text it wrote."""
    recorded: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    """drill -> the last run the progress file held once the app recorded its finished run."""

    # -- runs ---------------------------------------------------------------------------------

    def start_run(self, drill_id: str) -> RunTicket:
        """A new run of `drill_id`; the run in progress (of any drill) is cancelled."""
        if self.run_cancel is not None:
            self.run_cancel.set()
        self.live.clear()
        self.started_at.clear()
        self.token += 1
        self.run_cancel = threading.Event()
        self.live[drill_id] = LiveRun(drill_id, self.token)
        self.started_at[drill_id] = self.clock()
        return RunTicket(drill_id, self.token, self.run_cancel)

    def current(self, drill_id: str, token: int) -> LiveRun | None:
        """The live run of `drill_id` if `token` is its token; None for a replaced run."""
        live = self.live.get(drill_id)
        return live if live is not None and live.token == token else None

    def feed(self, drill_id: str, token: int, event: Event) -> LiveRun | None:
        """Fold one streamed event into the live run; None (and nothing done) when stale."""
        live = self.current(drill_id, token)
        if live is not None:
            live.feed(event)
        return live

    def finish(
        self, drill_id: str, token: int, result: RunResult, all_tests: list[str] | None = None
    ) -> LiveRun | None:
        """The run ended: the finished run to show and record, or None when it was replaced
        or cancelled (a cancelled run leaves the previous finished run on show)."""
        live = self.current(drill_id, token)
        if live is None:
            return None
        del self.live[drill_id]
        self.started_at.pop(drill_id, None)
        if result.status == RunStatus.CANCELLED:
            return None
        live.finish(result, all_tests)
        self.finished[drill_id] = live
        return live

    def running(self, drill_id: str) -> bool:
        return drill_id in self.live

    def elapsed(self, drill_id: str) -> float | None:
        """Seconds since the live run of `drill_id` started; None when none is live."""
        started = self.started_at.get(drill_id)
        return None if started is None else self.clock() - started

    def shown_run(self, drill_id: str) -> LiveRun | None:
        """The run the panels show for `drill_id`: the live one, else the last finished one."""
        return self.live.get(drill_id) or self.finished.get(drill_id)

    def forget(self, drill_id: str) -> None:
        """The drill was reset: neither its finished run nor the one in progress (started on the
        old file) describes the file now; the latter is cancelled and its result dropped."""
        if drill_id in self.live:
            if self.run_cancel is not None:
                self.run_cancel.set()
            del self.live[drill_id]
            self.started_at.pop(drill_id, None)
        self.finished.pop(drill_id, None)

    # -- the progress file, which the command line writes too ---------------------------------

    def note_recorded(self, drill_id: str, last_run: dict[str, Any] | None) -> None:
        """The app recorded its finished run of `drill_id`; the file's last run is now this."""
        self.recorded[drill_id] = last_run

    def outdated(self, last_runs: dict[str, dict[str, Any] | None]) -> list[str]:
        """The drills whose finished run this session no longer is the file's last run
        (`last_runs`: drill -> the file's last run): `tutor reset` or `tutor check` wrote
        since. Each is forgotten, so the panels show what the file says, as the CLI does."""
        stale = [d for d in self.finished if last_runs.get(d) != self.recorded.get(d)]
        for drill_id in stale:
            self.finished.pop(drill_id, None)
            self.recorded.pop(drill_id, None)
        return stale

    # -- bench --------------------------------------------------------------------------------

    def start_bench(self, drill_id: str, first_line: str) -> threading.Event | None:
        """Begin timing `drill_id`; None when a bench is already running."""
        if self.bench_drill is not None:
            return None
        self.bench_drill = drill_id
        self.bench_lines[drill_id] = [first_line]
        self.bench_cancel = threading.Event()
        return self.bench_cancel

    def bench_line(self, drill_id: str, line: str) -> list[str]:
        """A line the bench printed; returns the newest lines to show."""
        lines = self.bench_lines.setdefault(drill_id, [])
        lines.append(line)
        return lines[-BENCH_LINES_KEPT:]

    def finish_bench(self, drill_id: str, lines: list[str]) -> None:
        self.bench_drill = None
        self.bench_cancel = None
        self.bench_lines[drill_id] = lines

    # -- the app's own writes -----------------------------------------------------------------

    def note_write(self, path: Path, text: str) -> None:
        """The app wrote `text` to `path` (watch must not take it for the learner's save)."""
        self.written_by_app[path] = text

    def is_own_write(self, path: Path, text: str) -> bool:
        """Whether `text` on disk is what the app wrote there (asked once per change)."""
        return self.written_by_app.pop(path, None) == text

    # -- the end ------------------------------------------------------------------------------

    def stop_all(self) -> None:
        """Cancel the run and the bench in progress (the app is closing)."""
        for cancel in (self.run_cancel, self.bench_cancel):
            if cancel is not None:
                cancel.set()
