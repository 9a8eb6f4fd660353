"""What the coach says about the selected drill: the hint stages out so far, or what a pass taught.

Stages are shown one after another with no counter: the learner sees how much they have asked
for, not how much is left.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from tutor.coach.run_hints import HintView
from tutor.course import progress as p
from tutor.course.catalogue import Drill
from tutor.course.hints import stage_markdown
from tutor.lang.i18n import N_, _
from tutor.states import DrillStatus, RunStatus

RUNNING_TEXT = N_("**Tests running.** The hint for this run comes with its results.")


def code_syntax(drill: Drill) -> str:
    """How a drill's code is highlighted: its kernel language's syntax (python, cpp)."""
    from tutor import kernels

    return kernels.language(drill.language).syntax


def coach_markdown(
    drill: Drill,
    state: p.DrillProgress,
    view: HintView | None,
    next_drill: Drill | None,
    *,
    running: bool = False,
    has_file: bool = True,
) -> str:
    """The hint panel's text for one drill, as Markdown (hint stages with fenced code).
    `has_file`: whether the learner's file exists yet (it is made when they start)."""
    if running:  # the run panel shows the new run: never the old run's hint beside it
        return _(RUNNING_TEXT)
    last_status = (state.last_run or {}).get("status")
    if view is not None:
        syntax = code_syntax(drill)
        parts = [f"**{view.title}**", *(stage_markdown(stage, syntax) for stage in view.stages)]
        if view.exhausted and not view.opens_solution:
            parts.append(
                _("That is every hint for an untouched starter: write your kernel, then save.")
            )
        elif view.exhausted:
            parts.append(
                _(
                    "That is every hint for this mistake: the solution is available "
                    "with **s**, beside your file."
                )
            )
        else:
            parts.append(_("Press **h** for a further hint."))
        if view.note:
            parts.insert(1, f"*{view.note}*")
        if state.regressed:
            parts.insert(1, _("*You passed this drill before; this run fails.*"))
        return "\n\n".join(parts)
    if state.status == DrillStatus.PASSED and last_status in (RunStatus.PASSED, None):
        nxt = (
            _("Next: press **n** for {drill}, {title}.").format(
                drill=next_drill.id, title=next_drill.title
            )
            if next_drill
            else _("That was the last unfinished drill: every drill is passed.")
        )
        taught = (
            _("**What this drill taught:** {taught}").format(taught=drill.taught)
            if drill.taught
            else ""
        )
        return "\n\n".join(
            part
            for part in (
                _("**Passed.**"),
                taught,
                _("Press **s** to read the reference solution beside your file."),
                nxt,
            )
            if part
        )
    if last_status is not None:
        return _(
            "**No named mistake.**\n\nThe failing test's message, beside this panel, says "
            "what differs and where."
        )
    before = (
        _("You passed this drill before; your file is the starter again.") + " "
        if state.solved
        else ""
    )
    # The file's name stands alone in the sentence, and how to open it is a sentence of its
    # own: a clause slotted into another reads garbled in a language of another word order.
    opening = (
        _("Press **e** to open it.")
        if has_file
        else _("**Enter** makes it from the starter, and **e** opens it in your editor.")
    )
    return _(
        "**Start here.** {before}Read the lesson, then write your kernel in {where}. {opening} "
        "Press **r** to run the tests, or just save the file: with watch on, every save runs "
        "them."
    ).format(before=before, where=f"`drills/mine/{drill.file}`", opening=opening)


def split_title(markdown: str) -> tuple[str, str]:
    """A leading `**title**` paragraph apart from the rest (the title stays in view)."""
    first, _, rest = markdown.partition("\n\n")
    if first.startswith("**") and first.endswith("**") and first.count("**") == 2:
        return first.strip("*"), rest
    return "", markdown


class HintPanel(Vertical):
    """The title on top, the stages in a scrolling Markdown under it; fed by `show`."""

    ALLOW_MAXIMIZE = True  # f fills the screen with the title and the stages together

    def compose(self) -> ComposeResult:
        yield Static(id="hint-title")
        with VerticalScroll(id="hint-body"):
            yield Markdown(id="hint-text")

    markdown = ""
    """The text on show, title included."""

    def show(self, markdown: str, newest: str = "") -> None:
        """Show `markdown`, scrolled to where its `newest` part (the stage just revealed)
        begins, or to the top. The same text again changes nothing: the learner's place stays."""
        if markdown == self.markdown:
            return
        self.markdown = markdown
        title, body = split_title(markdown)
        heading = self.query_one("#hint-title", Static)
        heading.update(Text(title))  # a title is plain words, never markup
        heading.display = bool(title)
        found = body.rfind(newest) if newest else -1
        self._render_text(body, body[:found].count("\n") if found >= 0 else 0)

    @work(exclusive=True, group="hint-text")
    async def _render_text(self, markdown: str, first_line: int) -> None:
        try:
            text = self.query_one("#hint-text", Markdown)
            await text.update(markdown)
        except NoMatches:  # the app closed while the text was being laid out
            return
        # A stage is read from its start: a long one (a code block) would otherwise end the
        # panel with its last lines, its first ones scrolled away.
        blocks = [b for b in text.children if isinstance(b, MarkdownBlock)]
        start = next((b for b in blocks if b.source_range[0] >= first_line), None)
        self.call_after_refresh(self._scroll_to, start if first_line else None)

    def _scroll_to(self, block: MarkdownBlock | None) -> None:
        try:
            body = self.query_one("#hint-body", VerticalScroll)
        except NoMatches:
            return
        if block is None:
            body.scroll_home(animate=False)
        else:
            body.scroll_to_widget(block, animate=False, top=True)
