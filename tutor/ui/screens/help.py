"""The `?` screen: every key of the drill screen, and what the marks in the list mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.lang.i18n import _
from tutor.ui import marks


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", priority=True)]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys  # (key, what it does), from the drill screen's bindings

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        for key, description in self.keys:
            table.add_row(key, _(description))
        legend = Table.grid(padding=(0, 2))
        legend.add_column()
        legend.add_column()
        for mark, meaning in marks.LEGEND:
            legend.add_row(mark, _(meaning))
        with VerticalScroll(id="help-box", classes="dialog") as box:
            # How to close it sits in the frame, so it shows however short the terminal is.
            box.border_title = _("Keys")
            box.border_subtitle = _("Esc or ? closes this")
            yield Static(table)
            yield Static(Text("\n" + _("Marks in the drill list"), style="bold underline"))
            yield Static(legend)
            yield Static(
                Text(
                    "\n"
                    + _(
                        "With watch on, saving a file in drills/mine/ from any editor "
                        "runs that drill's tests."
                    ),
                    style="dim",
                )
            )
