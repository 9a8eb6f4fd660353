"""What the coach says about the selected drill: the hint stages out so far, or what a pass taught.

Stages are shown one after another with no counter: the learner sees how much they have asked
for, not how much is left.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from tutor import progress as p
from tutor import results as r
from tutor.catalogue import Drill
from tutor.coach import HintView


def coach_markdown(
    drill: Drill, state: p.DrillProgress, view: HintView | None, next_drill: Drill | None
) -> str:
    """The hint panel's text for one drill, as Markdown."""
    last_status = (state.last_run or {}).get("status")
    if view is not None:
        parts = [f"**{view.title}**", *view.stages]
        if view.exhausted:
            parts.append(
                "That is every hint for this mistake: the solution is available "
                "with **s**, beside your file."
            )
        else:
            parts.append("Press **h** for a further hint.")
        return "\n\n".join(parts)
    if state.status == p.PASSED and last_status in (r.PASSED, None):
        nxt = (
            f"Next: press **n** for {next_drill.id}, {next_drill.title}."
            if next_drill
            else "That was the last unfinished drill: every drill is passed."
        )
        taught = f"**What this drill taught:** {drill.taught}" if drill.taught else ""
        return "\n\n".join(
            part
            for part in (
                "**Passed.**",
                taught,
                "Press **s** to read the reference solution beside your file.",
                nxt,
            )
            if part
        )
    if last_status is not None:
        return (
            "**No named mistake.**\n\nThe failing test's message, beside this panel, says "
            "what differs and where."
        )
    return (
        f"**Start here.** Read the lesson, then write your kernel in "
        f"`drills/mine/{drill.file}` (press **e** to open it). Press **r** to run the tests, "
        "or just save the file: with watch on, every save runs them."
    )


class HintPanel(VerticalScroll):
    """A scrolling Markdown panel fed by `show`."""

    def compose(self) -> ComposeResult:
        yield Markdown(id="hint-text")

    markdown = ""
    """The text on show."""

    def show(self, markdown: str) -> None:
        self.markdown = markdown
        self._render_text(markdown)

    @work(exclusive=True, group="hint-text")
    async def _render_text(self, markdown: str) -> None:
        await self.query_one("#hint-text", Markdown).update(markdown)
        self.scroll_end(animate=False)  # the newest stage is at the end
