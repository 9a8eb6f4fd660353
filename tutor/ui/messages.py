"""App-wide messages: what the workers and the file watcher report back to the drill screen.

Workers run outside the event loop and only ever post these; handlers on the screen change
widgets. A run's messages carry its `token` so a replaced run's late messages can be dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from tutor.run.events import Event
from tutor.run.results import RunResult


@dataclass
class RunStarted(Message, bubble=False):
    """A run of the learner's file began."""

    drill_id: str
    token: int


@dataclass
class RunEvent(Message, bubble=False):
    """One event streamed by the runner (tutor.run.events: SessionStarted, TestStarted, ...)."""

    drill_id: str
    token: int
    event: Event


@dataclass
class RunFinished(Message, bubble=False):
    """The runner returned; `result.status` says how the child process ended. For a run cut
    short, `all_tests` lists every test of the drill (to name the ones it never ran)."""

    drill_id: str
    token: int
    result: RunResult
    all_tests: list[str] | None = None


@dataclass
class BackendFound(Message, bubble=False):
    """Where kernels run: `label` is "CPU interpreter" or the GPU's name."""

    label: str
    on_gpu: bool


@dataclass
class LearnerFileSaved(Message, bubble=False):
    """A learner file under drills/mine/ changed on disk (any editor, debounced)."""

    drill_id: str


@dataclass
class BenchRequested(Message, bubble=False):
    """The learner asked to time the drill's kernels."""

    drill_id: str


@dataclass
class BenchProgress(Message, bubble=False):
    """A line the bench process printed while it runs."""

    drill_id: str
    line: str


@dataclass
class BenchFinished(Message, bubble=False):
    """A bench ended: its report (tutor.bench.BenchReport), or the error that stopped it."""

    drill_id: str
    report: Any = None
    error: str | None = None
