"""Helpers for the app's Pilot tests: recording messages, waiting for the app, finding screens."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from rich.console import Console
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot

from tutor.ui.app import TutorApp
from tutor.ui.screens.drill_screen import DrillScreen

SIZE = (110, 34)  # the terminal the tests and snapshots use


class Recorder:
    """Every message the app's pumps receive (run_test(message_hook=...))."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)

    def of(self, kind: type) -> list:
        return [m for m in self.messages if isinstance(m, kind)]

    def notices(self) -> list[str]:
        return [str(m.notification.message) for m in self.of(Notify)]


def drill_screen(app: TutorApp) -> DrillScreen:
    return next(s for s in app.screen_stack if isinstance(s, DrillScreen))


# Upper bounds only, never waited out when things work: a busy CI machine (another worker's
# run touching its 2 GiB memory limit, say) can stall this process for many seconds.
WAIT_S = 60.0


async def wait_until(
    pilot: Pilot, condition: Callable[[], object], what: str, timeout: float = WAIT_S
) -> None:
    """Let the app run until `condition()` holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


async def settle(pilot: Pilot) -> None:
    """Let queued messages, Markdown updates and animations finish."""
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def shown_text(static, width: int = 400) -> str:
    """What a Static widget shows, as plain text `width` columns wide (a Rich group of parts
    drawn as the panel draws it, not its repr)."""
    content = static.content
    if isinstance(content, str):
        return content
    console = Console(width=width, file=io.StringIO(), color_system=None, record=True)
    console.print(content)
    return console.export_text()
