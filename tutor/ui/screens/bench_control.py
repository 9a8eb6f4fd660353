"""Bench from the drill screen: tutor.bench in a thread worker, its lines streamed to the panel.

On the CPU nothing is timed ("bench needs a GPU"). The report's best times go to the progress
file (on the UI thread, like every other progress write).
"""

from __future__ import annotations

import threading

from textual import work
from textual.widgets import TabbedContent

from tutor import bench
from tutor.ui.messages import BenchFinished, BenchProgress, BenchRequested
from tutor.ui.widgets.bench_panel import NEEDS_GPU, BenchPanel


class BenchControl:
    """Mixed into DrillScreen, whose `tutor`, `selected`, `on_gpu` and `_say` it uses."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._bench_drill: str | None = None  # the drill being timed now
        self._bench_cancel: threading.Event | None = None
        self._bench_lines: dict[str, list[str]] = {}  # drill -> its last bench report

    def on_bench_requested(self, message: BenchRequested) -> None:
        panel = self.query_one(BenchPanel)
        self.query_one(TabbedContent).active = "bench-tab"
        if not self.on_gpu:
            panel.show_lines([NEEDS_GPU])
            self._say("bench needs a GPU", severity="warning")
        elif self._bench_drill is not None:
            self._say(f"A bench of {self._bench_drill} is running: wait for its report.")
        else:
            self._bench_drill = message.drill_id
            self._bench_lines[message.drill_id] = [
                f"Timing {message.drill_id}: the tests run first, then each shape…"
            ]
            panel.show_lines(self._bench_lines[message.drill_id])
            self._bench_cancel = threading.Event()
            self._bench_worker(message.drill_id, self._bench_cancel)

    @work(thread=True, exclusive=True, exit_on_error=False, group="bench")
    def _bench_worker(self, drill_id: str, cancel: threading.Event) -> None:
        app = self.tutor

        def progress(line: str) -> None:
            self.post_message(BenchProgress(drill_id, line))

        try:
            report = app.bench(
                app.catalogue,
                drill_id,
                "mine",
                runner=app.runner,
                force_cpu=app.force_cpu,
                on_progress=progress,
                cancel=cancel,
            )
        except Exception as exc:  # a failed bench is reported, never a dead app
            self.post_message(BenchFinished(drill_id, error=f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(BenchFinished(drill_id, report))

    def on_bench_progress(self, message: BenchProgress) -> None:
        lines = self._bench_lines.setdefault(message.drill_id, [])
        lines.append(message.line)
        if message.drill_id == self.selected:
            self.query_one(BenchPanel).show_lines(lines[-200:])

    def on_bench_finished(self, message: BenchFinished) -> None:
        self._bench_drill = None
        if message.report is None:
            lines = [f"bench failed: {message.error}"]
        else:
            lines = bench.format_report(message.report).splitlines()
            try:
                improved = bench.record_best(self.tutor.store, message.report)
            except OSError as exc:
                improved = []
                self._say(f"Could not save the best times: {exc}", severity="error")
            if improved:
                lines += ["", "New best time for: " + ", ".join(improved)]
        self._bench_lines[message.drill_id] = lines
        if message.drill_id == self.selected:
            self.query_one(BenchPanel).show_lines(lines)
