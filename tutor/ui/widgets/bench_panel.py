"""The bench area: the shapes a drill is timed at, the learner's best times, the last report."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tutor.course.catalogue import Drill
from tutor.course.progress import DrillProgress
from tutor.lang.i18n import N_, _

NEEDS_GPU = N_(
    "bench needs a GPU: the CPU interpreter runs one program at a time, so its "
    "timings say nothing about a kernel's speed."
)


def _best_lines(state: DrillProgress) -> list[str]:
    lines = []
    for label, best in sorted(state.best_bench.items()):
        gbps = f", {best['gbps']:.0f} GB/s" if best.get("gbps") is not None else ""
        lines.append(f"  {label}: {best.get('us')} µs{gbps}")
    return ["", _("Your best times:"), *lines] if lines else []


class BenchPanel(Static):
    """Plain text, replaced as a whole by each `show_*` call."""

    def show_drill(
        self,
        drill: Drill,
        state: DrillProgress,
        on_gpu: bool,
        report: list[str] | None = None,
        perf_hint: list[str] | None = None,
    ) -> None:
        """The drill's bench shapes, best times and the perf hint of its last bench, or its
        last report this session (which carries the perf hint already)."""
        if report is not None:
            self.show_lines(report)
            return
        cases = [f"  {case.label}" for case in drill.bench] or ["  (no bench shapes)"]
        intro = _("Press b to time your kernel at these shapes:") if on_gpu else _(NEEDS_GPU)
        self.show_lines([intro, "", *cases, *_best_lines(state), *(perf_hint or [])])

    def show_lines(self, lines: list[str]) -> None:
        self.update(Text("\n".join(lines)))  # Text: brackets in labels are not markup
