"""The sidebar: drills grouped by track with a status mark each, and the course's progress bar."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, OptionList, ProgressBar
from textual.widgets.option_list import Option

from tutor.course.catalogue import Catalogue, Drill
from tutor.lang.i18n import _
from tutor.ui import marks

_TRACK_PREFIX = "track:"
_MARK_STYLES = {
    marks.NOT_STARTED: "dim",
    marks.FAILING: "bold red",
    marks.PASSED_WITH_HINTS: "bold green",
    marks.PASSED_CLEAN: "bold green",
    marks.RUNNING: "bold yellow",
    marks.COMING: "dim",
}


class DrillList(OptionList):
    """One option per drill under a heading per track; highlighting a drill selects it."""

    @dataclass
    class DrillHighlighted(Message):
        """The learner moved to a drill."""

        drill_list: DrillList
        drill_id: str

        @property
        def control(self) -> DrillList:
            return self.drill_list

    @dataclass
    class DrillOpened(Message):
        """The learner chose a drill to work on (Enter, or a click)."""

        drill_list: DrillList
        drill_id: str

        @property
        def control(self) -> DrillList:
            return self.drill_list

    def __init__(self, catalogue: Catalogue, *, id: str | None = None) -> None:
        self.catalogue = catalogue
        self.marks: dict[str, str] = {}  # drill -> the mark on show
        self.short = False  # marks and ids only (a narrow terminal)
        options: list[Option] = []
        for track in catalogue.tracks:
            options.append(
                Option(self._heading(track.title), id=f"{_TRACK_PREFIX}{track.id}", disabled=True)
            )
            for drill in catalogue.in_track(track.id):
                mark = marks.COMING if drill.coming else marks.NOT_STARTED
                self.marks[drill.id] = mark
                options.append(
                    Option(self._prompt(drill, mark), id=drill.id, disabled=drill.coming)
                )
        super().__init__(*options, id=id)

    @staticmethod
    def _heading(title: str, short: bool = False) -> Text:
        # Short: the title's first word on one line. The narrow sidebar is 9 cells wide, where
        # "Matmul and attention" would wrap inside "attention".
        words = title.split()
        if short and words:
            return Text(words[0], style="bold", no_wrap=True, overflow="ellipsis")
        return Text(title, style="bold")

    @staticmethod
    def _prompt(drill: Drill, mark: str, short: bool = False) -> Table:
        # A grid, so a long title wraps under itself rather than under the mark.
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True)
        cells = [Text(mark, style=_MARK_STYLES.get(mark, "")), Text(drill.id, style="bold")]
        if not short:
            grid.add_column()
            cells.append(Text(drill.title))
        grid.add_row(*cells)
        return grid

    def retitle(self, catalogue: Catalogue) -> None:
        """Show the titles of `catalogue` (the same drills, in another language)."""
        self.catalogue = catalogue
        self.short = not self.short
        self.show_short(not self.short)  # redraws every heading and prompt

    def show_short(self, short: bool) -> None:
        """Marks and ids under one-word track headings (True), or every title whole (False)."""
        if short == self.short:
            return
        self.short = short
        for track in self.catalogue.tracks:
            self.replace_option_prompt(
                f"{_TRACK_PREFIX}{track.id}", self._heading(track.title, short)
            )
        for drill_id, mark in self.marks.items():
            self.replace_option_prompt(
                drill_id, self._prompt(self.catalogue.drill(drill_id), mark, short)
            )

    def show_marks(self, drill_marks: dict[str, str]) -> None:
        """Redraw the mark in front of each drill named in `drill_marks`."""
        for drill_id, mark in drill_marks.items():
            if self.marks.get(drill_id) != mark:
                self.marks[drill_id] = mark
                self.replace_option_prompt(
                    drill_id, self._prompt(self.catalogue.drill(drill_id), mark, self.short)
                )

    def select_drill(self, drill_id: str) -> None:
        self.highlighted = self.get_option_index(drill_id)

    @on(OptionList.OptionHighlighted)
    def _forward_highlight(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        drill_id = event.option.id
        if drill_id and not drill_id.startswith(_TRACK_PREFIX):
            self.post_message(self.DrillHighlighted(self, drill_id))

    @on(OptionList.OptionSelected)
    def _forward_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        drill_id = event.option.id
        if drill_id and not drill_id.startswith(_TRACK_PREFIX):
            self.post_message(self.DrillOpened(self, drill_id))


class CourseProgress(Vertical):
    """How many drills are passed, as words and as a bar."""

    def compose(self) -> ComposeResult:
        yield Label(id="progress-label")
        yield ProgressBar(show_eta=False, id="progress-bar")

    def show(self, passed: int, total: int) -> None:
        self.query_one("#progress-label", Label).update(
            _("Passed {passed} of {total} drills").format(passed=passed, total=total)
        )
        self.query_one("#progress-bar", ProgressBar).update(total=total, progress=passed)
