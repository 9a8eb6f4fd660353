"""The reference solution beside the learner's own file, both read-only.

Side by side where the terminal is wide; in a narrow one (under NARROW columns, e.g. 80x24) the
two files stack, each the full width, since two 35-column halves cut every line of a kernel.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from tutor.ui.layout import NARROW
from tutor.ui.widgets.code_view import CodeView


class SolutionScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,s", "close", "Close", priority=True)]

    def __init__(self, mine: Path, solution: Path) -> None:
        super().__init__()
        self.mine = mine
        self.solution = solution

    def compose(self) -> ComposeResult:
        with Horizontal(id="solution-box", classes="dialog"):
            with Vertical():
                yield Label(f"Your file: {self.mine.name}", classes="pane-title")
                yield CodeView(id="solution-mine")
            with Vertical():
                yield Label("The reference solution (Esc closes)", classes="pane-title")
                yield CodeView(id="solution-reference")

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < NARROW, "-narrow")
        self.query_one("#solution-mine", CodeView).show_file(self.mine, "(your file is missing)")
        self.query_one("#solution-reference", CodeView).show_file(
            self.solution, "(this drill has no solution file yet)"
        )

    def action_close(self) -> None:
        self.dismiss()
