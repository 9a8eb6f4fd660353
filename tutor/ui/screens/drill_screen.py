"""The drill screen: the list, the lesson and code, the last run and the coach's hints.

It owns the layout and the keys (priority bindings, so single letters work while the code view
has focus). Runs, watch and bench each live in a mixin of their own (run_control, watch_control,
bench_control): workers that post messages, and the handlers that turn them into widget updates.
Core objects (catalogue, coach, runner) come from the app.
"""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Markdown, TabbedContent, TabPane

from tutor import workspace
from tutor.catalogue import Drill
from tutor.coach import HintView
from tutor.progress import PASSED
from tutor.ui import marks
from tutor.ui.environment import CPU_LABEL, editor_command
from tutor.ui.messages import BackendFound, BenchRequested
from tutor.ui.screens.bench_control import BenchControl
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.screens.help import HelpScreen
from tutor.ui.screens.run_control import RunControl
from tutor.ui.screens.solution import SolutionScreen
from tutor.ui.screens.watch_control import WatchControl
from tutor.ui.widgets.bench_panel import BenchPanel
from tutor.ui.widgets.code_view import CodeView
from tutor.ui.widgets.drill_list import CourseProgress, DrillList
from tutor.ui.widgets.hint_panel import HintPanel, coach_markdown
from tutor.ui.widgets.run_panel import RunPanel
from tutor.ui.widgets.status_bar import StatusBar
from tutor.yamlfile import YamlFileError

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp

# What each key does, in the words of the help screen (the footer shows the short names).
KEY_HELP = {
    "run": "run the selected drill's tests",
    "hint": "reveal the next hint for the current mistake",
    "edit": "open your file in $VISUAL or $EDITOR",
    "toggle_watch": "turn watch on or off (on: saving a file runs its drill)",
    "solution": "the solution beside your file (after a pass or the last hint)",
    "reset": "put the starter back (your file is backed up first)",
    "bench": "time your kernels (needs a GPU)",
    "next_drill": "go to the next drill not yet passed",
    "help": "this screen",
    "quit": "quit",
}


class DrillScreen(RunControl, WatchControl, BenchControl, Screen[None]):
    BINDINGS = [
        Binding("r", "run", "Run", priority=True),
        Binding("h", "hint", "Hint", priority=True),
        Binding("e", "edit", "Edit", priority=True),
        Binding("w", "toggle_watch", "Watch", priority=True),
        Binding("s", "solution", "Solution", priority=True),
        Binding("x", "reset", "Reset", priority=True),
        Binding("b", "bench", "Bench", priority=True),
        Binding("n", "next_drill", "Next", priority=True),
        Binding("question_mark", "help", "Help", key_display="?", priority=True),
        Binding("q", "quit", "Quit", priority=True),
    ]

    selected: reactive[str | None] = reactive(None, init=False)
    """The drill whose lesson, code, run and hints are on screen."""
    watching: reactive[bool] = reactive(True, init=False)
    """Whether saving a learner file re-runs its drill."""
    on_gpu: reactive[bool] = reactive(False, init=False)
    """Whether kernels run on a GPU (bench works only there)."""

    @property
    def tutor(self) -> TutorApp:
        return cast("TutorApp", self.app)

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield DrillList(self.tutor.catalogue, id="drills")
                yield CourseProgress(id="progress")
            with Vertical(id="work"):
                with TabbedContent(id="tabs", initial="lesson-tab"):
                    with TabPane("Lesson", id="lesson-tab"), VerticalScroll(id="lesson-scroll"):
                        yield Markdown(id="lesson")
                    with TabPane("Code", id="code-tab"):
                        yield CodeView(id="code")
                    with TabPane("Bench", id="bench-tab"):
                        yield BenchPanel(id="bench")
                with Horizontal(id="feedback"):
                    yield RunPanel(self._title_of, id="run")
                    yield HintPanel(id="hint")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        app = self.tutor
        if app.store.warning:
            self._say(app.store.warning, severity="warning", timeout=15)
        if app.force_cpu:  # known at once: show it in the first frame, not a frame later
            self.on_backend_found(BackendFound(CPU_LABEL, on_gpu=False))
        else:
            self._probe_backend()
        self.set_reactive(DrillScreen.watching, app.start_watching)
        self.watch_watching(self.watching)
        self._refresh_marks()
        playable = marks.playable(app.catalogue)
        first = marks.next_unfinished(app.catalogue, app.store) or next(iter(playable), None)
        if first is not None:  # a catalogue of drills still to come has nothing to select
            self.query_one(DrillList).select_drill(first.id)
        self.query_one(DrillList).focus()

    def on_unmount(self) -> None:
        # A run still going would keep the process alive after the app exits: stop it.
        for cancel in (self._run_cancel, self._bench_cancel):
            if cancel is not None:
                cancel.set()

    # -- showing a drill --------------------------------------------------------------------

    @on(DrillList.DrillHighlighted, "#drills")
    def _drill_highlighted(self, event: DrillList.DrillHighlighted) -> None:
        self.selected = event.drill_id

    def watch_selected(self, drill_id: str | None) -> None:
        if drill_id is None:
            return
        drill = self.tutor.catalogue.drill(drill_id)
        self.tutor.store.reload()  # `tutor check` or `tutor progress` may have written it
        mine = self._ensure_mine(drill)
        self.query_one("#lesson", Markdown).update(self._lesson(drill))
        self.query_one(CodeView).show_file(
            mine, f"# {drill.file} has no starter yet: this drill is not ready."
        )
        self._show_bench(drill_id)
        self._show_run(drill_id)
        self._show_coach(drill_id)
        self._refresh_marks()

    def _lesson(self, drill: Drill) -> str:
        path = self.tutor.catalogue.paths.lesson(drill.id)
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            return f"# {drill.title}\n\nThis drill has no lesson yet ({self._shown(path)})."

    def _ensure_mine(self, drill: Drill) -> Path | None:
        """The learner's file, copied from the starter on first selection."""
        path = self.tutor.catalogue.paths.mine(drill.file)
        existed = path.exists()
        try:
            workspace.ensure_mine(self.tutor.catalogue, drill)
        except OSError as exc:
            self._say(f"Could not create {self._shown(path)}: {exc}", severity="error")
            return None
        if not existed:
            self._note_app_write(path)
        return path

    def _show_bench(self, drill_id: str) -> None:
        self.query_one(BenchPanel).show_drill(
            self.tutor.catalogue.drill(drill_id),
            marks.state_of(self.tutor.store, drill_id),
            self.on_gpu,
            self._bench_lines.get(drill_id),
        )

    def _show_run(self, drill_id: str) -> None:
        live = self._live_runs.get(drill_id) or self._finished_runs.get(drill_id)
        stored = marks.state_of(self.tutor.store, drill_id).last_run
        self.query_one(RunPanel).show(live, stored)

    def _show_coach(self, drill_id: str) -> None:
        app = self.tutor
        drill = app.catalogue.drill(drill_id)
        following = marks.next_unfinished(app.catalogue, app.store, after=drill_id)
        text = coach_markdown(
            drill, marks.state_of(app.store, drill_id), self._hint_view(drill_id), following
        )
        self.query_one(HintPanel).show(text)

    def _hint_view(self, drill_id: str) -> HintView | None:
        try:
            return self.tutor.coach.current(drill_id)
        except YamlFileError as exc:
            self._say(str(exc), title="A hints file is broken", severity="error", timeout=15)
            return None

    def _refresh_marks(self) -> None:
        app = self.tutor
        drill_marks = {
            d.id: marks.RUNNING
            if d.id in self._live_runs
            else marks.mark(marks.state_of(app.store, d.id))
            for d in marks.playable(app.catalogue)
        }
        self.query_one(DrillList).show_marks(drill_marks)
        self.query_one(CourseProgress).show(*marks.passed_count(app.catalogue, app.store))

    def _title_of(self, drill_id: str, diagnosis: str) -> str:
        try:
            return self.tutor.coach.book(drill_id).title(diagnosis)
        except YamlFileError:
            return diagnosis

    def _say(self, message: str, **kwargs) -> None:
        """A notification; never markup, since paths and test ids hold brackets."""
        self.notify(message, markup=False, **kwargs)

    def _shown(self, path: Path) -> str:
        """A path as the learner would type it from the course folder."""
        try:
            return str(path.relative_to(self.tutor.catalogue.paths.root))
        except ValueError:
            return str(path)

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "code-tab":
            self.query_one(CodeView).reload()

    def on_backend_found(self, message: BackendFound) -> None:
        self.query_one(StatusBar).backend = message.label
        if message.on_gpu != self.on_gpu:
            self.on_gpu = message.on_gpu
            if self.selected is not None:
                self._show_bench(self.selected)

    @work(thread=True, exclusive=True, exit_on_error=False, group="probe")
    def _probe_backend(self) -> None:
        name = self.tutor.gpu_probe()
        self.post_message(BackendFound(name or CPU_LABEL, on_gpu=name is not None))

    # -- keys -------------------------------------------------------------------------------

    def _selected_drill(self) -> Drill | None:
        return self.tutor.catalogue.drill(self.selected) if self.selected else None

    def action_run(self) -> None:
        if self.selected:
            self.start_run(self.selected)

    def action_hint(self) -> None:
        drill_id = self.selected
        if drill_id is None:
            return
        before = self._hint_view(drill_id)
        if before is None:
            passed = marks.state_of(self.tutor.store, drill_id).status == PASSED
            self._say(
                "No hint needed: this drill is passed."
                if passed
                else "No hint yet: hints come with a failing run (press r)."
            )
            return
        if before.exhausted:
            self._say("That is every hint for this mistake: the solution is available with s.")
            return
        try:
            self.tutor.coach.reveal_next(drill_id)
        except (OSError, YamlFileError) as exc:
            self._say(f"Could not reveal the hint: {exc}", severity="error")
        self._show_coach(drill_id)
        self._refresh_marks()

    def action_edit(self) -> None:
        drill = self._selected_drill()
        if drill is None:
            return
        mine = self._ensure_mine(drill)
        command = editor_command()
        if command is None:
            self._say(
                f"No editor is set: export EDITOR (or VISUAL), e.g. EDITOR=nano, or "
                f"open {self._shown(self.tutor.catalogue.paths.mine(drill.file))} in any "
                "editor: with watch on, each save runs the tests.",
                severity="warning",
                timeout=12,
            )
            return
        if mine is None:
            return
        try:
            with self.app.suspend():
                subprocess.run([*command, str(mine)], check=False)
        except SuspendNotSupported:
            self._say(
                f"This terminal cannot hand itself to an editor: open {self._shown(mine)} "
                "in another window.",
                severity="warning",
            )
        except OSError as exc:
            self._say(f"Could not start {command[0]}: {exc.strerror}", severity="error")
        self.query_one(TabbedContent).active = "code-tab"
        self.query_one(CodeView).reload()

    def action_toggle_watch(self) -> None:
        self.watching = not self.watching
        self._say(
            "Watch on: saving a file in drills/mine/ runs its drill."
            if self.watching
            else "Watch off: press r to run the tests."
        )

    def action_solution(self) -> None:
        drill = self._selected_drill()
        if drill is None:
            return
        try:
            unlocked = self.tutor.coach.solution_unlocked(drill.id)
        except YamlFileError:
            unlocked = False
        if not unlocked:
            self._say(
                "The solution opens after a pass, or once every hint for the current "
                "mistake is out (h).",
                severity="warning",
            )
            return
        paths = self.tutor.catalogue.paths
        self.app.push_screen(SolutionScreen(paths.mine(drill.file), paths.solution(drill.file)))

    def action_reset(self) -> None:
        drill = self._selected_drill()
        if drill is None:
            return
        paths = self.tutor.catalogue.paths
        question = (
            f"Put the starter back for {drill.id} ({drill.title})?\n\n"
            f"{self._shown(paths.mine(drill.file))} is copied to "
            f"{self._shown(paths.backups)}/ first."
        )
        self.app.push_screen(ConfirmScreen(question), partial(self._reset_answered, drill))

    def _reset_answered(self, drill: Drill, yes: bool | None) -> None:
        if not yes:
            self._say("Nothing was reset: your file is as it was.")
            return
        mine = self.tutor.catalogue.paths.mine(drill.file)
        try:
            saved = workspace.reset(self.tutor.catalogue, drill)
        except OSError as exc:
            self._say(f"Could not reset {drill.id}: {exc}", severity="error")
            return
        self._note_app_write(mine)
        where = (
            f"your old file is in {self._shown(saved)}" if saved else "there was no file to back up"
        )
        self._say(f"{drill.id} is back to its starter; {where}.", timeout=15)
        if drill.id == self.selected:
            self.query_one(CodeView).reload()

    def action_bench(self) -> None:
        if self.selected:
            self.post_message(BenchRequested(self.selected))

    def action_next_drill(self) -> None:
        app = self.tutor
        following = marks.next_unfinished(app.catalogue, app.store, after=self.selected)
        if following is None:
            self._say("Every drill is passed.")
            return
        self.query_one(DrillList).select_drill(following.id)

    def action_help(self) -> None:
        keys = [
            (b.key_display or b.key, KEY_HELP.get(b.action, b.description))
            for b in self.BINDINGS
            if isinstance(b, Binding)
        ]
        self.app.push_screen(HelpScreen(keys))

    def action_quit(self) -> None:
        self.app.exit(0)
