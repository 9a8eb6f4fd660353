"""The selected drill's last run: how it ended, one row per test, the first failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tutor.coach.report import MAP_CELLS, fit_error_map, interpreter_note
from tutor.lang.i18n import N_, _
from tutor.states import Outcome, RunStatus, label
from tutor.ui.live import NOT_RUN, RUNNING, LiveRun

_OUTCOMES = {
    Outcome.PASSED: (N_("✓ pass"), "green"),
    Outcome.FAILED: (N_("✗ fail"), "bold red"),
    Outcome.SKIPPED: (N_("- skip"), "dim"),
    RUNNING: (N_("⋯ running"), "yellow"),
    RunStatus.TIMEOUT: (N_("✗ hung"), "bold red"),
    RunStatus.CRASHED: (N_("✗ crash"), "bold red"),
    RunStatus.OUT_OF_MEMORY: (N_("✗ memory"), "bold red"),
    RunStatus.CANCELLED: (N_("- stopped"), "dim"),
    NOT_RUN: (N_("- not run"), "dim"),
}
_STATUS_CLASSES = ("-passed", "-failed", "-broken", "-running")
_OUTPUT_LINES = 15


def _seconds(value: float) -> str:
    return f"{value:.0f} s"


def summary(
    live: LiveRun | None,
    last_run: dict[str, Any] | None = None,
    *,
    elapsed: float | None = None,
    limit: float | None = None,
) -> tuple[str, str]:
    """One line saying how the run went, and the CSS class that colours it. A run in progress
    says how long it has run (`elapsed`) and when it will be stopped (`limit`)."""
    if live is None:
        if last_run:  # only known from the progress file (an earlier session or the CLI)
            done, total = last_run.get("passed_tests", 0), last_run.get("tests", 0)
            return (
                _(
                    "Last run ({at}): {status}, {done} of {total} tests passed. "
                    "Press r to run again."
                ).format(
                    at=last_run.get("at", _("earlier")),
                    status=label(str(last_run.get("status"))),
                    done=done,
                    total=total,
                ),
                "",
            )
        return _("No run yet: press r to run the tests (or save your file)."), ""
    result = live.result
    if result is None:
        done = sum(row.outcome != RUNNING for row in live.rows.values())
        clock = ""
        if elapsed is not None:
            clock = (
                _(", {elapsed} of the {limit} limit").format(
                    elapsed=_seconds(elapsed), limit=_seconds(limit)
                )
                if limit is not None
                else f", {_seconds(elapsed)}"
            )
        return _("Running the tests… {done} done").format(done=done) + clock, "-running"
    failed = sum(row.outcome == Outcome.FAILED for row in live.rows.values())
    took = f" ({result.duration:.1f} s)"
    if result.status == RunStatus.PASSED:
        return _("Passed: all {total} tests").format(total=len(live.rows)) + took, "-passed"
    if result.status == RunStatus.FAILED:
        failed_text = _("Failed: {failed} of {total} tests").format(
            failed=failed, total=len(live.rows)
        )
        return failed_text + took, "-failed"
    never = len(live.never_ran)
    if result.status == RunStatus.TIMEOUT and never:
        return (
            _("Timed out: {never} of {total} tests never ran").format(
                never=never, total=len(live.rows)
            ),
            "-broken",
        )
    # The run broke before its tests could judge the kernel: the message below says why.
    heading = {
        RunStatus.TIMEOUT: N_("Timed out: the tests were stopped"),
        RunStatus.CRASHED: N_("Crashed: the test process died"),
        RunStatus.OUT_OF_MEMORY: N_("Stopped: the run used too much memory"),
        RunStatus.COLLECTION_ERROR: N_("The tests could not start"),
        RunStatus.CANCELLED: N_("Stopped"),
        RunStatus.SETUP_ERROR: N_("Could not run the tests"),
        RunStatus.UNTRUSTED: N_("Not counted: the results could not be trusted"),
    }.get(result.status, result.status)
    return _(heading), "-broken"


def shows_a_failure(live: LiveRun | None, last_run: dict[str, Any] | None = None) -> bool | None:
    """Whether the run on show failed or broke, so the learner needs the run and the hint more
    than the lesson; None while a run streams with no failure yet (nothing to say either way)."""
    if live is None:
        return bool(last_run) and last_run.get("status") != RunStatus.PASSED
    if live.result is None:
        return True if live.first_failure() is not None else None
    return live.result.status not in (RunStatus.PASSED, RunStatus.CANCELLED)


class FittedMap:
    """An error map drawn to the width it is given: its rows never wrap (a 64-cell row in a
    60-column panel read as two rows, 60 + 4)."""

    def __init__(self, lines: list[str], facts: dict | None = None) -> None:
        self.lines = lines
        self.facts = facts  # the failure's facts: the heading is made again from them

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in fit_error_map(self.lines, options.max_width, self.facts):
            # The rows of cells fit; the heading and the legend are words, and wrap as words.
            yield Text(line, style="bold", no_wrap=set(line) <= set(MAP_CELLS))


class TestTable:
    """The tests, one row each, laid out for the width it is drawn at: a test's name gets the
    room it needs (parameter ids whole) as long as the mistake's name keeps MIN_TITLE columns;
    only a longer name folds."""

    MIN_TITLE = 20  # "The tail block reads" / "past the end": two lines, not five

    def __init__(self, rows: list[tuple[Text, Text, Text]]) -> None:
        self.rows = rows

    def key(self) -> tuple:
        """What the table shows, to tell whether it changed."""
        return tuple((a.plain, a.style, b.plain, c.plain) for a, b, c in self.rows)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # Widths in cells: a Chinese outcome or mistake name takes two per character.
        label = max((label.cell_len for label, _, _ in self.rows), default=1)
        name = max((name.cell_len for _, name, _ in self.rows), default=4)
        title = max((title.cell_len for _, _, title in self.rows), default=0)
        room = options.max_width - label - 2  # a space after each of the first two columns
        name_width = max(min(name, room - min(title, self.MIN_TITLE)), min(name, room // 2), 1)
        table = Table(box=None, padding=(0, 1, 0, 0), show_edge=False, header_style="bold dim")
        # A column's width counts its padding: the space after it.
        table.add_column("", no_wrap=True, width=label + 1)
        table.add_column(_("test"), overflow="fold", width=name_width + 1)
        table.add_column(_("diagnosis"), width=max(room - name_width, 1))
        for row in self.rows:
            table.add_row(*row)
        yield table


class RunPanel(VerticalScroll):
    """Renders a LiveRun; `title_of` turns a diagnosis id into the mistake's name."""

    ALLOW_MAXIMIZE = True  # f fills the screen with it (a scrolling container is not, by default)

    def __init__(self, title_of: Callable[[str, str], str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title_of = title_of
        self.shown: LiveRun | None = None  # the run on screen
        self.summary_line = ""
        self._shown_keys: dict[str, object] = {}  # what each Static shows, as `_update` saw it

    def compose(self) -> ComposeResult:
        yield Static(id="run-summary")
        yield Static(id="run-failure")  # before the table: it is what the learner reads first
        yield Static(id="tests")

    def show(
        self,
        live: LiveRun | None,
        last_run: dict[str, Any] | None = None,
        *,
        elapsed: float | None = None,
        limit: float | None = None,
    ) -> None:
        line, status_class = summary(live, last_run, elapsed=elapsed, limit=limit)
        self.shown, self.summary_line = live, line
        self._update("#run-summary", line, lambda: Text(line))  # test ids hold brackets
        for name in _STATUS_CLASSES:
            self.set_class(name == status_class, name)
        table = self._table(live) if live else None
        tests = self.query_one("#tests", Static)
        tests.display = bool(live and live.rows)
        self._update("#tests", table.key() if table else (), lambda: table or "")
        text = self._failure_text(live)
        blank = isinstance(text, Text) and not text
        self.query_one("#run-failure", Static).display = not blank  # no blank row for nothing
        # A failure is drawn each time (its map fits the width); nothing twice is nothing.
        self._update("#run-failure", "" if blank else object(), lambda: text)

    def _update(self, selector: str, key: object, content: Callable[[], RenderableType]) -> None:
        """Give the Static its new content unless it shows the same already: every update lays
        the whole screen out again (0.05-0.2 s on a 2-core machine, beside a run's child), and
        a live run redraws the panel every LIVE_REDRAW_S."""
        if self._shown_keys.get(selector) == key:
            return
        self._shown_keys[selector] = key
        self.query_one(selector, Static).update(content())

    def _table(self, live: LiveRun) -> TestTable:
        """One row per test: outcome, name, and the name of the mistake it points to."""
        rows = []
        for row in live.rows.values():
            label, style = _OUTCOMES.get(row.outcome, (row.outcome, ""))
            label = _(label)
            title = self.title_of(live.drill, row.diagnosis) if row.diagnosis else ""
            # Text, never markup: a parameter id such as [unit-k] would read as a style tag.
            rows.append((Text(label, style=style), Text(row.name), Text(title, style="red")))
        return TestTable(rows)

    @staticmethod
    def _failure_text(live: LiveRun | None) -> RenderableType:
        """The first failing test's message; for a run that broke, why it broke."""
        if (
            live is None
            or live.result is None
            or live.result.status in (RunStatus.PASSED, RunStatus.CANCELLED)
        ):
            return Text()
        result = live.result
        failure = live.first_failure()
        if result.status == RunStatus.FAILED and failure is not None:
            where = _(" (your file, line {line})").format(line=failure.line) if failure.line else ""
            # Text, never markup: messages hold brackets (shapes, ['fp32', 'fp64']) as written.
            text = Text.assemble((failure.name, "bold"), where, "\n", failure.message)
            note = interpreter_note(failure, live.backend)
            if note:  # beside the values it explains
                text.append("\n" + note, style="yellow")
            if failure.where:
                text.append("\n" + _("Where: {where}").format(where=failure.where))
            if failure.details:
                text.append("\n" + failure.details, style="dim")
            if failure.backend_note:
                text.append("\n" + failure.backend_note, style="yellow")
            if failure.error_map:
                return Group(text, FittedMap(failure.error_map, failure.facts))
            return text
        text = Text(result.message)
        if live.never_ran:
            text.append("\nNever ran: " + ", ".join(live.never_ran))
        if result.status in (RunStatus.CRASHED, RunStatus.SETUP_ERROR) and result.output.strip():
            tail = "\n".join(result.output.strip().splitlines()[-_OUTPUT_LINES:])
            text.append("\n\nThe end of the test process's output:\n" + tail, style="dim")
        return text
