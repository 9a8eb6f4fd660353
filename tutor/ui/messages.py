"""App-wide messages: what the workers and the file watcher report back to the drill screen.

Workers run outside the event loop and only ever post these; handlers on the screen change
widgets. A run's messages carry its `token` so a replaced run's late messages can be dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from tutor.results import RunResult


@dataclass
class RunStarted(Message):
    """A run of the learner's file began."""

    drill_id: str
    token: int


@dataclass
class RunEvent(Message):
    """One event streamed by the runner (session_start, test_start, test, ...)."""

    drill_id: str
    token: int
    event: dict[str, Any]


@dataclass
class RunFinished(Message):
    """The runner returned; `result.status` says how the child process ended."""

    drill_id: str
    token: int
    result: RunResult


@dataclass
class BackendFound(Message):
    """Where kernels run: `label` is "CPU interpreter" or the GPU's name."""

    label: str
    on_gpu: bool


@dataclass
class LearnerFileSaved(Message):
    """A learner file under drills/mine/ changed on disk (any editor, debounced)."""

    drill_id: str


@dataclass
class BenchRequested(Message):
    """The learner asked to time the drill's kernels."""

    drill_id: str


@dataclass
class BenchFinished(Message):
    """A bench ended: report lines to show, or the error that stopped it."""

    drill_id: str
    lines: list[str] = field(default_factory=list)
    error: str | None = None
