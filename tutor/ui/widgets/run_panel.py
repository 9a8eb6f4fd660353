"""The selected drill's last run: how it ended, one row per test, the first failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tutor import results as r
from tutor.ui.live import NOT_RUN, RUNNING, LiveRun

_OUTCOMES = {
    "passed": ("✓ pass", "green"),
    "failed": ("✗ fail", "bold red"),
    "skipped": ("- skip", "dim"),
    RUNNING: ("⋯ running", "yellow"),
    r.TIMEOUT: ("✗ hung", "bold red"),
    r.CRASHED: ("✗ crash", "bold red"),
    r.OUT_OF_MEMORY: ("✗ memory", "bold red"),
    r.CANCELLED: ("- stopped", "dim"),
    NOT_RUN: ("- not run", "dim"),
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
                f"Last run ({last_run.get('at', 'earlier')}): {last_run.get('status')}, "
                f"{done} of {total} tests passed. Press r to run again.",
                "",
            )
        return "No run yet: press r to run the tests (or save your file).", ""
    result = live.result
    if result is None:
        done = sum(row.outcome != RUNNING for row in live.rows.values())
        clock = ""
        if elapsed is not None:
            clock = f", {_seconds(elapsed)}" + (
                f" of the {_seconds(limit)} limit" if limit is not None else ""
            )
        return f"Running the tests… {done} done{clock}", "-running"
    failed = sum(row.outcome == "failed" for row in live.rows.values())
    took = f" ({result.duration:.1f} s)"
    if result.status == r.PASSED:
        return f"Passed: all {len(live.rows)} tests{took}", "-passed"
    if result.status == r.FAILED:
        return f"Failed: {failed} of {len(live.rows)} tests{took}", "-failed"
    never = len(live.never_ran)
    if result.status == r.TIMEOUT and never:
        return f"Timed out: {never} of {len(live.rows)} tests never ran", "-broken"
    # The run broke before its tests could judge the kernel: the message below says why.
    heading = {
        r.TIMEOUT: "Timed out: the tests were stopped",
        r.CRASHED: "Crashed: the test process died",
        r.OUT_OF_MEMORY: "Stopped: the run used too much memory",
        r.COLLECTION_ERROR: "The tests could not start",
        r.CANCELLED: "Stopped",
        r.SETUP_ERROR: "Could not run the tests",
    }.get(result.status, result.status)
    return heading, "-broken"


class RunPanel(VerticalScroll):
    """Renders a LiveRun; `title_of` turns a diagnosis id into the mistake's name."""

    def __init__(self, title_of: Callable[[str, str], str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title_of = title_of
        self.shown: LiveRun | None = None  # the run on screen
        self.summary_line = ""

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
        self.query_one("#run-summary", Static).update(Text(line))  # test ids hold brackets
        for name in _STATUS_CLASSES:
            self.set_class(name == status_class, name)
        tests = self.query_one("#tests", Static)
        tests.display = bool(live and live.rows)
        tests.update(self._table(live) if live else "")
        self.query_one("#run-failure", Static).update(self._failure_text(live))

    def _table(self, live: LiveRun) -> Table:
        """One row per test: outcome, name, and the name of the mistake it points to."""
        table = Table(
            box=None, padding=(0, 1, 0, 0), show_edge=False, expand=True, header_style="bold dim"
        )
        table.add_column("", no_wrap=True)
        table.add_column("test", ratio=3, overflow="fold")
        table.add_column("diagnosis", ratio=2)
        for row in live.rows.values():
            label, style = _OUTCOMES.get(row.outcome, (row.outcome, ""))
            title = self.title_of(live.drill, row.diagnosis) if row.diagnosis else ""
            table.add_row(Text(label, style=style), row.name, Text(title, style="red"))
        return table

    @staticmethod
    def _failure_text(live: LiveRun | None) -> Text:
        """The first failing test's message; for a run that broke, why it broke."""
        if live is None or live.result is None or live.result.status in (r.PASSED, r.CANCELLED):
            return Text()
        result = live.result
        failure = live.first_failure()
        if result.status == r.FAILED and failure is not None:
            where = f" (your file, line {failure.line})" if failure.line else ""
            # Text, never markup: messages hold brackets (shapes, ['fp32', 'fp64']) as written.
            text = Text.assemble((failure.name, "bold"), where, "\n", failure.message)
            if failure.where:
                text.append("\nWhere: " + failure.where)
            if failure.error_map:
                text.append("\n" + "\n".join(failure.error_map), style="bold")
            if failure.details:
                text.append("\n" + failure.details, style="dim")
            return text
        text = Text(result.message)
        if live.never_ran:
            text.append("\nNever ran: " + ", ".join(live.never_ran))
        if result.status in (r.CRASHED, r.SETUP_ERROR) and result.output.strip():
            tail = "\n".join(result.output.strip().splitlines()[-_OUTPUT_LINES:])
            text.append("\n\nThe end of the test process's output:\n" + tail, style="dim")
        return text
