"""The drill screen: the list, the lesson and code, the last run and the coach's hints.

It owns the layout and the keys (priority bindings, so single letters work while the code view
has focus). Its collaborators come in a Services record (catalogue, store, coach, runner, bench);
what it knows about runs, the bench and its own writes lives in one Session (tutor.ui.session,
no Textual). Workers only post messages (tutor.ui.messages); the handlers below ask the session
what the message means and update the widgets.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from functools import partial
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Markdown, TabbedContent, TabPane
from watchfiles import Change, awatch

from tutor import bench as bench_report
from tutor.coach import check
from tutor.coach.perf_hints import PerfCoach
from tutor.coach.report import format_perf_hint, solution_rule
from tutor.coach.run_hints import HintView
from tutor.course import language, lessons, workspace
from tutor.course.catalogue import Drill, load_catalogue
from tutor.course.hints import stage_markdown
from tutor.course.progress import ProgressError
from tutor.course.titles import localized
from tutor.course.translations import lesson_text
from tutor.course.yamlfile import YamlFileError
from tutor.lang import i18n
from tutor.lang.i18n import N_, _
from tutor.run.events import SessionStarted, TestFinished
from tutor.states import DrillStatus
from tutor.ui import marks
from tutor.ui.environment import (
    CPU_BACKEND,
    CPU_LABEL,
    FALLBACK_EDITORS,
    backend_label,
    editor_command,
)
from tutor.ui.layout import NARROW
from tutor.ui.messages import (
    BackendFound,
    BenchFinished,
    BenchProgress,
    BenchRequested,
    LearnerFileSaved,
    RunEvent,
    RunFinished,
    RunStarted,
)
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.screens.help import HelpScreen
from tutor.ui.screens.solution import SolutionScreen
from tutor.ui.services import Services
from tutor.ui.session import RunTicket, Session
from tutor.ui.widgets.bench_panel import NEEDS_GPU, BenchPanel
from tutor.ui.widgets.code_view import CodeView
from tutor.ui.widgets.drill_list import CourseProgress, DrillList
from tutor.ui.widgets.hint_panel import HintPanel, coach_markdown, code_syntax
from tutor.ui.widgets.run_panel import RunPanel, shows_a_failure, summary
from tutor.ui.widgets.status_bar import StatusBar

BENCH_MARGIN = 20  # columns the list and the frames take beside the Bench tab's text

# What each key does, in the words of the help screen (the footer shows the short names).
KEY_HELP = {
    "tab('lesson-tab')": N_("the Lesson tab (scroll it with ↑ ↓ PgUp PgDn Home End)"),
    "tab('code-tab')": N_("the Code tab: your file, read-only (scroll with the same keys)"),
    "tab('bench-tab')": N_("the Bench tab: timings on a GPU"),
    "app.focus_next": N_("move between the list, the tab and the panels (Shift+Tab back)"),
    "app.focus_previous": "",  # said on Tab's line
    "fill": N_("fill the screen with the focused panel (the lesson, code, run or hint)"),
    "minimize": N_("put a filled panel back (f again does too)"),
    "toggle_sidebar": N_("show or hide the drill list (narrow terminals)"),
    "toggle_answers": N_("show or fold the lesson's self-check answers"),
    "run": N_("run the selected drill's tests"),
    "hint": N_("reveal the next hint stage (on the Bench tab: the perf coach's)"),
    "edit": N_("open your file in $VISUAL or $EDITOR (else editor, nano or vi)"),
    "toggle_watch": N_("turn watch on or off (on: saving a file runs its drill)"),
    "solution": N_("the solution beside your file (after a pass or the last hint)"),
    "reset": N_("put the starter back (your file is backed up first)"),
    "bench": N_("time your kernels (needs a GPU)"),
    "next_drill": N_("go to the next drill not yet passed"),
    "help": N_("this screen"),
    "switch_language": N_("switch the language: English / 中文 (remembered in .tutor/)"),
    "quit": N_("quit"),
}


TAB_LABELS = {"lesson-tab": N_("1 Lesson"), "code-tab": N_("2 Code"), "bench-tab": N_("3 Bench")}


# While tests stream in, the run panel is redrawn at most this often: a redraw per event took
# the core the run's own child needed (t3's solution: 0.4 s of tests read 0.75 s in the app).
# A failed test is a verdict and is shown at once.
LIVE_REDRAW_S = 0.1
# How often the app looks whether the command line wrote the progress file (a stat, no read).
FOLLOW_S = 0.5


class DrillScreen(Screen[None]):
    ALLOW_IN_MAXIMIZED_VIEW = "StatusBar, Footer"  # a filled panel keeps the status and the keys
    BINDINGS = [
        # The tab labels carry their keys (1 Lesson, 2 Code, 3 Bench): the footer has no room.
        Binding("1", "tab('lesson-tab')", N_("Lesson"), show=False, priority=True),
        Binding("2", "tab('code-tab')", N_("Code"), show=False, priority=True),
        Binding("3", "tab('bench-tab')", N_("Bench"), show=False, priority=True),
        # Priority, as the letters are: a letter pressed right after Tab must see the new focus
        # (a plain binding waits for the key to bubble up from the focused widget; f did not).
        Binding("tab", "app.focus_next", N_("Focus"), key_display="Tab", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", show=False, priority=True),
        Binding("f", "fill", N_("Full screen"), priority=True),
        Binding("escape", "minimize", N_("Back"), key_display="Esc", show=False),
        Binding("l", "toggle_sidebar", N_("List"), show=False, priority=True),
        Binding("a", "toggle_answers", N_("Answers"), show=False, priority=True),
        Binding("r", "run", N_("Run"), priority=True),
        Binding("h", "hint", N_("Hint"), priority=True),
        Binding("e", "edit", N_("Edit"), priority=True),
        Binding("w", "toggle_watch", N_("Watch"), show=False, priority=True),
        Binding("s", "solution", N_("Solution"), priority=True),
        Binding("x", "reset", N_("Reset"), show=False, priority=True),
        Binding("b", "bench", N_("Time it"), show=False, priority=True),
        Binding("n", "next_drill", N_("Next"), priority=True),
        Binding("question_mark", "help", N_("Help"), key_display="?", priority=True),
        Binding("L", "switch_language", N_("Language"), show=False, priority=True),
        Binding("q", "quit", N_("Quit"), priority=True),
    ]

    selected: reactive[str | None] = reactive(None, init=False)
    """The drill whose lesson, code, run and hints are on screen."""
    watching: reactive[bool] = reactive(True, init=False)
    """Whether saving a learner file re-runs its drill."""
    on_gpu: reactive[bool] = reactive(False, init=False)
    """Whether kernels run on a GPU (bench works only there)."""
    narrow: reactive[bool] = reactive(False, init=False)
    """A terminal under NARROW columns: the list shows marks and ids, run and hint stack."""
    sidebar_shown: reactive[bool] = reactive(True, init=False)
    """Whether the drill list is on screen (l hides it)."""
    coaching: reactive[bool] = reactive(False, init=False)
    """The run on show failed or broke: the run and hint panels get most of the height."""

    def __init__(self, services: Services, session: Session | None = None) -> None:
        super().__init__()
        self.services = services
        self.session = session or Session()
        self._redraw_due = False  # the run panel waits for LIVE_REDRAW_S to redraw
        self._code_after_start = False  # a saved file to show once its run has started

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield DrillList(self.services.catalogue, id="drills")
                yield CourseProgress(id="progress")
            with Vertical(id="work"):
                with TabbedContent(id="tabs", initial="lesson-tab"):
                    lesson = TabPane(_(TAB_LABELS["lesson-tab"]), id="lesson-tab")
                    with lesson, VerticalScroll(id="lesson-scroll"):
                        yield Markdown(id="lesson")
                    with TabPane(_(TAB_LABELS["code-tab"]), id="code-tab"):
                        yield CodeView(id="code")
                    with TabPane(_(TAB_LABELS["bench-tab"]), id="bench-tab"):
                        yield BenchPanel(id="bench")
                with Horizontal(id="feedback"):
                    yield RunPanel(self._title_of, id="run")
                    yield HintPanel(id="hint")
        yield StatusBar(id="status")
        yield Footer(show_command_palette=False)  # ctrl+p opens it; the keys need the room

    def on_mount(self) -> None:
        app = self.services
        self.query_one(StatusBar).host = app.host_name
        if app.store.warning:
            self._say(app.store.warning, severity="warning", timeout=15)
        if app.force_cpu:  # known at once: show it in the first frame, not a frame later
            self.on_backend_found(BackendFound(CPU_LABEL, on_gpu=False))
        else:
            self._probe_backend()
        self.set_reactive(DrillScreen.watching, app.watch.on_at_start)
        self.watch_watching(self.watching)
        self._refresh_marks()
        playable = marks.playable(app.catalogue)
        first = marks.next_unfinished(app.catalogue, app.store) or next(iter(playable), None)
        if first is not None:  # a catalogue of drills still to come has nothing to select
            self.query_one(DrillList).select_drill(first.id)
        self.query_one(DrillList).focus()
        self.narrow = self.app.size.width < NARROW
        self.set_interval(1.0, self._tick)
        self.set_interval(FOLLOW_S, self._follow_progress)
        if i18n.current() != i18n.ENGLISH:
            self._relabel_keys()

    def on_resize(self, event) -> None:
        self.narrow = event.size.width < NARROW

    def watch_narrow(self, narrow: bool) -> None:
        self.set_class(narrow, "-narrow")
        self.query_one(DrillList).show_short(narrow)

    def watch_coaching(self, coaching: bool) -> None:
        self.set_class(coaching, "-coaching")

    def watch_sidebar_shown(self, shown: bool) -> None:
        self.query_one("#sidebar").display = shown

    def _tick(self) -> None:
        """Once a second while the selected drill runs: its elapsed time in the run panel."""
        if self.selected is not None and self.session.running(self.selected):
            self._show_run(self.selected)

    def _follow_code(self) -> None:
        """With watch off nothing runs on a save, but the code on show is still the file as
        saved: read it again when an editor wrote it (or made the learner's own copy)."""
        drill = self._selected_drill()
        if self.watching or drill is None:
            return
        view = self.query_one(CodeView)
        mine = self.services.catalogue.paths.mine(drill.file)
        if view.changed_on_disk() or (view.path != mine and mine.exists()):
            self._refresh_code()

    def _follow_progress(self) -> None:
        """Show what the progress file says once the command line beside the app wrote it
        (`tutor hint` revealed a stage, `tutor reset` or `tutor check` replaced the last run),
        so the app and `tutor list` / `tutor progress` always agree."""
        self._follow_code()
        store = self.services.store
        if not store.changed_on_disk():
            return
        warning = store.warning
        try:
            store.reload()
        except ProgressError as exc:  # said once: the next look finds the same unreadable file
            self._say(str(exc), severity="error", timeout=15)
            return
        if store.warning and store.warning != warning:
            self._say(store.warning, severity="warning", timeout=15)
        self.session.outdated({d: state.last_run for d, state in store.drills.items()})
        self._refresh_marks()
        if self.selected is not None:
            self._show_run(self.selected)
            self._show_coach(self.selected)
            self._show_bench(self.selected)

    def on_unmount(self) -> None:
        # A run still going would keep the process alive after the app exits: stop it.
        self.session.stop_all()

    # -- showing a drill --------------------------------------------------------------------

    @on(DrillList.DrillHighlighted, "#drills")
    def _drill_highlighted(self, event: DrillList.DrillHighlighted) -> None:
        self.selected = event.drill_id

    @on(DrillList.DrillOpened, "#drills")
    def _drill_opened(self, event: DrillList.DrillOpened) -> None:
        """Enter (or a click) on a drill: start on it, with the learner's own file."""
        self.selected = event.drill_id
        drill = self.services.catalogue.drill(event.drill_id)
        mine = self._ensure_mine(drill)
        if mine is None:
            return
        self.query_one(TabbedContent).active = "code-tab"
        self._say(
            _(
                "Your file is {path}: write your kernel there, in any editor (e opens yours). "
                "With watch on, each save runs the tests."
            ).format(path=self._shown(mine))
        )

    def watch_selected(self, drill_id: str | None) -> None:
        if drill_id is None:
            return
        drill = self.services.catalogue.drill(drill_id)
        self.services.store.reload()  # `tutor check` or `tutor progress` may have written it
        self.query_one("#lesson", Markdown).update(self._lesson(drill))
        # Another drill's lesson opens at its top (its title, what you will write), not at
        # the place the last one was read to.
        self.query_one("#lesson-scroll", VerticalScroll).scroll_home(animate=False)
        self._show_code(drill)
        self._show_bench(drill_id)
        self._show_run(drill_id)
        self._show_coach(drill_id)
        self._refresh_marks()

    answers_shown = False
    """Whether the lessons' self-check answers are shown (a) or folded away."""

    def _lesson(self, drill: Drill) -> str:
        paths = self.services.catalogue.paths
        path = paths.lesson(drill.id)
        if not path.exists():
            missing = _("This drill has no lesson yet ({path}).").format(path=self._shown(path))
            return f"# {drill.title}\n\n{missing}"
        try:
            text, note = lesson_text(path, i18n.current(), paths.root)
        except YamlFileError as exc:  # not UTF-8, a FIFO: said where the lesson would be
            return f"# {drill.title}\n\n{exc}"
        shown = lessons.render(
            text, answers=self.answers_shown, how_to_show=_("press a to show it")
        )
        return f"*{note}*\n\n{shown}" if note else shown

    def action_toggle_answers(self) -> None:
        self.answers_shown = not self.answers_shown
        drill = self._selected_drill()
        if drill is not None:
            self.query_one("#lesson", Markdown).update(self._lesson(drill))
            self.query_one(TabbedContent).active = "lesson-tab"

    def _show_code(self, drill: Drill) -> None:
        """The learner's file; until it exists, the starter it will be made from."""
        paths = self.services.catalogue.paths
        mine = paths.mine(drill.file)
        missing = f"# {drill.file} has no starter yet: this drill is not ready."
        if mine.exists():
            self.query_one(CodeView).show_file(mine, missing)
        else:
            note = "the starter (Enter, e or r makes your copy)"
            self.query_one(CodeView).show_file(paths.starter(drill.file), missing, note=note)

    def _refresh_code(self) -> None:
        """Read the file on show again; the learner's own once it exists (it may have been
        made since by an editor, a reset or a run)."""
        drill = self._selected_drill()
        view = self.query_one(CodeView)
        if drill is not None and view.path != self.services.catalogue.paths.mine(drill.file):
            self._show_code(drill)
        else:
            view.reload()

    def _ensure_mine(self, drill: Drill) -> Path | None:
        """The learner's file, copied from the starter the first time they open, edit or run
        the drill (never for a drill they only passed over in the list)."""
        path = self.services.catalogue.paths.mine(drill.file)
        existed = path.exists()
        try:
            workspace.ensure_mine(self.services.catalogue, drill)
        except (OSError, workspace.WorkspaceError) as exc:
            self._say(f"Could not create {self._shown(path)}: {exc}", severity="error")
            return None
        if not existed:
            self._note_app_write(path)
            if drill.id == self.selected:
                self._show_code(drill)
                self._show_coach(drill.id)
        return path

    def _show_bench(self, drill_id: str) -> None:
        report = self.session.bench_lines.get(drill_id)
        self.query_one(BenchPanel).show_drill(
            self.services.catalogue.drill(drill_id),
            marks.state_of(self.services.store, drill_id),
            self.on_gpu,
            None if report is None else report + self._perf_hint_lines(drill_id),
            self._perf_hint_lines(drill_id),
        )

    def _perf_coach(self) -> PerfCoach:
        return PerfCoach(self.services.catalogue, self.services.store)

    def _perf_hint_lines(self, drill_id: str) -> list[str]:
        """The perf coach's revealed stages for the drill's last bench (kept in progress)."""
        try:
            view = self._perf_coach().current(drill_id)
        except YamlFileError:
            return []
        if view is None:
            return []
        text = format_perf_hint(view, drill_id).replace(
            _("`tutor hint {drill} --perf` reveals the next one.").format(drill=drill_id),
            _("Press h for the next stage (or `tutor hint {drill} --perf`).").format(
                drill=drill_id
            ),
        )
        return ["", *text.splitlines()]

    def _show_run(self, drill_id: str) -> None:
        live = self.session.shown_run(drill_id)
        stored = marks.state_of(self.services.store, drill_id).last_run
        self.query_one(RunPanel).show(
            live,
            stored,
            elapsed=self.session.elapsed(drill_id),
            limit=self.services.time_limit,
        )
        failing = shows_a_failure(live, stored)
        if failing is not None:  # a run streaming with no failure yet keeps the layout
            self.coaching = failing
        self.query_one(StatusBar).activity = self._activity(drill_id)

    def _activity(self, drill_id: str) -> str:
        """The status bar's words about the selected drill's run (the one the panels show)."""
        live = self.session.shown_run(drill_id)
        if live is None:
            return ""
        if live.result is None:
            running = live.fold.running
            return f"{drill_id}: " + (
                running.split("::")[-1] if running else _("running the tests…")
            )
        return f"{drill_id}: {summary(live)[0]}"

    def _show_coach(self, drill_id: str) -> None:
        app = self.services
        drill = app.catalogue.drill(drill_id)
        following = marks.next_unfinished(app.catalogue, app.store, after=drill_id)
        view = self._hint_view(drill_id)
        running = self.session.running(drill_id)
        text = coach_markdown(
            drill,
            marks.state_of(app.store, drill_id),
            view,
            following,
            running=running,
            has_file=app.catalogue.paths.mine(drill.file).exists(),
        )
        newest = (
            stage_markdown(view.stages[-1], code_syntax(drill))
            if view and view.stages and not running
            else ""
        )
        self.query_one(HintPanel).show(text, newest)

    def _hint_view(self, drill_id: str) -> HintView | None:
        try:
            return self.services.coach.current(drill_id)
        except YamlFileError as exc:
            self._say(str(exc), title="A hints file is broken", severity="error", timeout=15)
            return None

    def _refresh_marks(self) -> None:
        app = self.services
        drill_marks = {
            d.id: marks.RUNNING
            if self.session.running(d.id)
            else marks.mark(marks.state_of(app.store, d.id))
            for d in marks.playable(app.catalogue)
        }
        self.query_one(DrillList).show_marks(drill_marks)
        self.query_one(CourseProgress).show(*marks.passed_count(app.catalogue, app.store))

    def _title_of(self, drill_id: str, diagnosis: str) -> str:
        try:
            return self.services.coach.book(drill_id).title(diagnosis)
        except YamlFileError:
            return diagnosis

    def _say(self, message: str, **kwargs) -> None:
        """A notification; never markup, since paths and test ids hold brackets."""
        self.notify(message, markup=False, **kwargs)

    def _shown(self, path: Path) -> str:
        """A path as the learner would type it from the course folder."""
        try:
            return str(path.relative_to(self.services.catalogue.paths.root))
        except ValueError:
            return str(path)

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "code-tab":
            self._refresh_code()

    _backend_label = ""
    """The backend as BackendFound named it (untranslated: CPU_LABEL or the GPU's name)."""

    def on_backend_found(self, message: BackendFound) -> None:
        self._backend_label = message.label
        self.query_one(StatusBar).backend = _(message.label)  # CPU_LABEL is translated
        if message.on_gpu != self.on_gpu:
            self.on_gpu = message.on_gpu
            if self.selected is not None:
                self._show_bench(self.selected)

    @work(thread=True, exclusive=True, exit_on_error=False, group="probe")
    def _probe_backend(self) -> None:
        name = self.services.gpu_probe()
        self.post_message(BackendFound(name or CPU_LABEL, on_gpu=name is not None))

    # -- keys -------------------------------------------------------------------------------

    def _selected_drill(self) -> Drill | None:
        return self.services.catalogue.drill(self.selected) if self.selected else None

    def action_run(self) -> None:
        drill = self._selected_drill()
        if drill is not None and self._ensure_mine(drill) is not None:
            self.start_run(drill.id)

    def action_hint(self) -> None:
        drill_id = self.selected
        if drill_id is None:
            return
        if self.query_one(TabbedContent).active == "bench-tab" and self._perf_hint(drill_id):
            return
        before = self._hint_view(drill_id)
        if before is None:
            passed = marks.state_of(self.services.store, drill_id).status == DrillStatus.PASSED
            if self.session.running(drill_id):
                self._say(_("The tests are running: the hint comes with their results."))
                return
            self._say(
                _("No hint needed: this drill is passed.")
                if passed
                else _("No hint yet: hints come with a failing run (press r).")
            )
            return
        if before.exhausted:
            self._say(
                _("That is every hint for this mistake: the solution is available with s.")
                if before.opens_solution
                else _("That is every hint for an untouched starter: write your kernel, then save.")
            )
            return
        try:
            self.services.coach.reveal_next(drill_id)
        except (OSError, YamlFileError) as exc:
            self._say(_("Could not reveal the hint: {why}").format(why=exc), severity="error")
        self._show_coach(drill_id)
        self._refresh_marks()

    def _perf_hint(self, drill_id: str) -> bool:
        """On the Bench tab, `h` reveals the perf coach's next stage; False when there is no
        perf hint (the correctness hint is then the one `h` is about)."""
        try:
            view = self._perf_coach().current(drill_id)
            if view is None:
                return False
            if view.exhausted:
                self._say(_("That is every stage of the perf hint: change the kernel, then b."))
            else:
                self._perf_coach().reveal_next(drill_id)
        except (OSError, YamlFileError) as exc:
            self._say(f"Could not reveal the perf hint: {exc}", severity="error")
        self._show_bench(drill_id)
        return True

    def action_edit(self) -> None:
        drill = self._selected_drill()
        if drill is None:
            return
        mine = self._ensure_mine(drill)
        command = editor_command()
        if command is None:
            self._say(
                f"No editor found (no $VISUAL or $EDITOR, none of {', '.join(FALLBACK_EDITORS)} "
                "installed): export EDITOR=<your editor>, or open "
                f"{self._shown(self.services.catalogue.paths.mine(drill.file))} in any editor: "
                "with watch on, each save runs the tests.",
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
        self._refresh_code()

    def action_toggle_watch(self) -> None:
        self.watching = not self.watching
        self._say(
            _("Watch on: saving a file in drills/mine/ runs its drill.")
            if self.watching
            else _("Watch off: press r to run the tests.")
        )
        drill = self._selected_drill()
        if not self.watching or drill is None or self.session.running(drill.id):
            return
        # Saves made while watch was off count now: the code as saved, and a run of it (unless
        # one is going already).
        self._refresh_code()
        mine = self.services.catalogue.paths.mine(drill.file)
        try:
            text = mine.read_bytes().decode("utf-8", "replace")
        except OSError:
            return  # no file of the learner's yet: nothing to run
        if not self._is_starter(drill, text):
            self.start_run(drill.id)

    def action_solution(self) -> None:
        drill = self._selected_drill()
        if drill is None:
            return
        try:
            unlocked = self.services.coach.solution_unlocked(drill.id)
        except YamlFileError:
            unlocked = False
        if not unlocked:
            self._say(_("The solution {rule}").format(rule=solution_rule("h")), severity="warning")
            return
        paths = self.services.catalogue.paths
        self.app.push_screen(SolutionScreen(paths.mine(drill.file), paths.solution(drill.file)))

    def action_reset(self) -> None:
        drill = self._selected_drill()
        if drill is None:
            return
        paths = self.services.catalogue.paths
        question = _(
            "Put the starter back for {drill} ({title})?\n\n{mine} is copied to {backups}/ first."
        ).format(
            drill=drill.id,
            title=drill.title,
            mine=self._shown(paths.mine(drill.file)),
            backups=self._shown(paths.backups),
        )
        self.app.push_screen(ConfirmScreen(question), partial(self._reset_answered, drill))

    def _reset_answered(self, drill: Drill, yes: bool | None) -> None:
        if not yes:
            self._say(_("Nothing was reset: your file is as it was."))
            return
        mine = self.services.catalogue.paths.mine(drill.file)
        try:
            saved = workspace.reset(self.services.catalogue, drill)
        except OSError as exc:
            self._say(f"Could not reset {drill.id}: {exc}", severity="error")
            return
        self._note_app_write(mine)
        try:
            self.services.coach.forget_run(drill.id)  # the last run no longer describes the file
        except OSError as exc:
            self._say(f"Could not update the progress file: {exc}", severity="error")
        self.session.forget(drill.id)
        where = (
            _("your old file is in {path}").format(path=self._shown(saved))
            if saved
            else _("there was no file to back up")
        )
        self._say(
            _("{drill} is back to its starter; {where}.").format(drill=drill.id, where=where),
            timeout=15,
        )
        self._refresh_marks()
        if drill.id == self.selected:
            self._refresh_code()
            self._show_run(drill.id)
            self._show_coach(drill.id)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_fill(self) -> None:
        """Fill the screen with the focused panel (Textual's maximize), or put it back."""
        if self.maximized is not None:
            self.minimize()
            return
        panel = self._focused_panel()
        if panel is None:
            self._say(
                _(
                    "Press Tab to move to the lesson, the code, the run or the hint first: f "
                    "fills the screen with the panel that has the focus."
                )
            )
            return
        self.maximize(panel, container=False)

    def _focused_panel(self) -> Widget | None:
        """The tabs, the run panel or the hint panel, when the focus is in one of them."""
        node = self.focused
        while isinstance(node, Widget):
            if isinstance(node, TabbedContent | RunPanel | HintPanel):
                return node
            node = node.parent
        return None

    def action_toggle_sidebar(self) -> None:
        self.sidebar_shown = not self.sidebar_shown

    def action_bench(self) -> None:
        if self.selected:
            self.post_message(BenchRequested(self.selected))

    def action_next_drill(self) -> None:
        app = self.services
        following = marks.next_unfinished(app.catalogue, app.store, after=self.selected)
        if following is None:
            self._say(_("Every drill is passed."))
            return
        self.query_one(DrillList).select_drill(following.id)

    def action_help(self) -> None:
        keys = [
            ("Enter", N_("start on the drill under the cursor: your file is made from its starter"))
        ]
        keys += [
            (b.key_display or b.key, KEY_HELP.get(b.action, b.description))
            for b in self.BINDINGS
            if isinstance(b, Binding) and KEY_HELP.get(b.action) != ""
        ]
        self.app.push_screen(HelpScreen(keys))

    # -- the language -------------------------------------------------------------------------

    def action_switch_language(self) -> None:
        """L (or "Language" in the command palette, ctrl+p): English and 中文 in turn."""
        lang = i18n.CHINESE if i18n.current() == i18n.ENGLISH else i18n.ENGLISH
        self.switch_language(lang)

    def switch_language(self, lang: str) -> None:
        """Speak `lang` from now on: every word on screen again, and remembered in .tutor/
        for the next start (tutor.lang.i18n)."""
        paths = self.services.catalogue.paths
        try:
            catalogue = localized(load_catalogue(paths), lang)
        except YamlFileError as exc:  # a titles file broken since the start: said, not fatal
            self._say(str(exc), severity="error", timeout=15)
            return
        i18n.activate(lang)
        self.services = replace(self.services, catalogue=catalogue)
        if hasattr(self.app, "services"):
            self.app.services = self.services
        try:
            language.remember(paths.writable(paths.state_dir / language.REMEMBERED).parent, lang)
        except OSError as exc:
            self._say(
                _("The language is not remembered for the next start: {why}").format(why=exc),
                severity="warning",
            )
        self.relabel()
        self._say(_("Language: {name}").format(name=i18n.NAMES[lang]))

    def relabel(self) -> None:
        """Draw every word on screen again in the active language: keys, tabs, the list, the
        status bar, and the selected drill's lesson, run and hints."""
        self._relabel_keys()
        tabs = self.query_one(TabbedContent)
        for pane_id, text in TAB_LABELS.items():
            tabs.get_tab(pane_id).label = _(text)
        self.query_one(DrillList).retitle(self.services.catalogue)
        if self._backend_label:
            self.query_one(StatusBar).relabel(_(self._backend_label))
        if self.selected is not None:
            self.watch_selected(self.selected)
        else:
            self._refresh_marks()

    def _relabel_keys(self) -> None:
        """The footer's key names in the active language (BINDINGS holds the English)."""
        english = {b.action: b.description for b in self.BINDINGS if isinstance(b, Binding)}
        table = self._bindings.key_to_bindings
        for key, bindings in table.items():
            table[key] = [
                replace(b, description=_(english.get(b.action, b.description))) for b in bindings
            ]
        self.refresh_bindings()

    def action_quit(self) -> None:
        self.app.exit(0)

    # -- runs: a thread worker per run, its events streamed as messages ---------------------
    # A new run cancels the one in progress (its cancel event makes the runner kill the child's
    # process group); every message carries the run's token and the session drops stale ones.

    def start_run(self, drill_id: str) -> None:
        """Run the learner's file; a run still in progress is cancelled first."""
        ticket = self.session.start_run(drill_id)
        self.post_message(RunStarted(drill_id, ticket.token))
        self._run_worker(ticket)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run", description="run")
    def _run_worker(self, ticket: RunTicket) -> None:
        def forward(event) -> None:
            self.post_message(RunEvent(ticket.drill_id, ticket.token, event))

        checked = check.run_tests(
            self.services.runner,
            ticket.drill_id,
            list_tests=self.services.list_tests,
            on_event=forward,
            cancel=ticket.cancel,
        )
        self.post_message(
            RunFinished(ticket.drill_id, ticket.token, checked.result, checked.all_tests)
        )

    def on_run_started(self, message: RunStarted) -> None:
        self._refresh_marks()
        if message.drill_id == self.selected:
            self._show_run(message.drill_id)
            self._show_coach(message.drill_id)

    def on_run_event(self, message: RunEvent) -> None:
        self._show_saved_code()
        live = self.session.feed(message.drill_id, message.token, message.event)
        if live is None:
            return
        if isinstance(message.event, SessionStarted):
            self.post_message(
                BackendFound(
                    backend_label(live.backend, live.device_name),
                    on_gpu=live.backend not in ("", CPU_BACKEND),
                )
            )
        if message.drill_id != self.selected:
            return
        event = message.event
        if isinstance(event, TestFinished) and event.result.failed:
            self._show_run(message.drill_id)
        elif not self._redraw_due:
            self._redraw_due = True
            self.set_timer(LIVE_REDRAW_S, self._redraw_live)

    def _redraw_live(self) -> None:
        self._redraw_due = False
        if self.selected is not None:
            self._show_run(self.selected)

    def on_run_finished(self, message: RunFinished) -> None:
        self._show_saved_code()
        drill_id, result = message.drill_id, message.result
        live = self.session.finish(drill_id, message.token, result, message.all_tests)
        if live is None:  # replaced by a newer run, or cancelled
            self._refresh_marks()
            if drill_id == self.selected:
                self._show_run(drill_id)
                self._show_coach(drill_id)
            return
        try:
            trouble = check.record(self.services.coach, check.CheckedRun(result)).not_saved
        except YamlFileError as exc:
            trouble = exc
        if trouble is not None:
            self._say(f"Could not record the run: {trouble}", severity="error")
        self.session.note_recorded(drill_id, marks.state_of(self.services.store, drill_id).last_run)
        self._refresh_marks()
        if drill_id == self.selected:
            self._show_run(drill_id)
            self._show_coach(drill_id)
            self._refresh_code()

    # -- watch: saving a learner file from any editor re-runs its drill ---------------------

    def watch_watching(self, watching: bool) -> None:
        self.query_one(StatusBar).watching = watching
        if watching:
            self._watch_files()
        else:
            self.workers.cancel_group(self, "watch")

    @work(exclusive=True, exit_on_error=False, group="watch")
    async def _watch_files(self) -> None:
        catalogue = self.services.catalogue
        settings = self.services.watch
        folder = catalogue.paths.mine("_").parent
        folder.mkdir(parents=True, exist_ok=True)
        by_name = {d.file: d.id for d in marks.playable(catalogue)}
        try:
            async for changes in awatch(
                folder, recursive=False, step=settings.step_ms, debounce=settings.debounce_ms
            ):
                saved = {
                    by_name[Path(path).name]
                    for change, path in changes
                    if change != Change.deleted and Path(path).name in by_name
                }
                for drill_id in sorted(saved):
                    self.post_message(LearnerFileSaved(drill_id))
        except (OSError, RuntimeError) as exc:  # e.g. out of inotify watches
            self._say(f"Watch stopped ({exc}): press r to run the tests.", severity="error")
            self.watching = False

    def on_learner_file_saved(self, message: LearnerFileSaved) -> None:
        drill_id = message.drill_id
        catalogue = self.services.catalogue
        path = catalogue.paths.mine(catalogue.drill(drill_id).file)
        try:
            data = path.read_bytes()
        except OSError:
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Still run it: Python names the bad byte and its line, which says more than a skip.
            text = data.decode("utf-8", "replace")
            self._say(
                f"{self._shown(path)} is not valid UTF-8 (byte {exc.start}): Python "
                "files are read as UTF-8.",
                severity="warning",
            )
        # The app's own copy of a starter, or watch went off meanwhile; or the starter again
        # (`tutor reset` beside the app, a learner's own undo): nothing to judge, and a run
        # would count a starter as a failure (! for a drill passed before). Shown, not run.
        skipped = self.session.is_own_write(path, text) or not self.watching
        starter = not skipped and self._is_starter(catalogue.drill(drill_id), text)
        if skipped or starter:
            if drill_id == self.selected:
                self._refresh_code()
            if starter:
                self._say(
                    _(
                        "{path} is the starter again: nothing to run until you write your kernel."
                    ).format(path=self._shown(path))
                )
            return
        if drill_id != self.selected:
            self.query_one(DrillList).select_drill(drill_id)
            self.start_run(drill_id)
            return
        # The run first. Laying out the new file in the code view takes the main thread (and
        # the GIL) for 0.06-0.11 s on 2 cores, and the run's thread, which must ask the warm
        # process for a fork, waited behind it: the view is refreshed at the run's first event
        # (the child is running by then) or at its end.
        self._code_after_start = True
        self.start_run(drill_id)

    def _show_saved_code(self) -> None:
        if self._code_after_start:
            self._code_after_start = False
            self._refresh_code()

    def _is_starter(self, drill: Drill, text: str) -> bool:
        try:
            starter = self.services.catalogue.paths.starter(drill.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        return text == starter

    def _note_app_write(self, path: Path) -> None:
        try:
            self.session.note_write(path, path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass

    # -- bench: tutor.bench in a thread worker, its lines streamed to the panel -------------

    def on_bench_requested(self, message: BenchRequested) -> None:
        panel = self.query_one(BenchPanel)
        self.query_one(TabbedContent).active = "bench-tab"
        if not self.on_gpu:
            panel.show_lines([NEEDS_GPU])
            self._say("bench needs a GPU", severity="warning")
            return
        if self._ensure_mine(self.services.catalogue.drill(message.drill_id)) is None:
            return
        busy = self.session.bench_drill
        cancel = self.session.start_bench(
            message.drill_id, f"Timing {message.drill_id}: the tests run first, then each shape…"
        )
        if cancel is None:
            self._say(f"A bench of {busy} is running: wait for its report.")
            return
        panel.show_lines(self.session.bench_lines[message.drill_id])
        self._bench_worker(message.drill_id, cancel)

    @work(thread=True, exclusive=True, exit_on_error=False, group="bench")
    def _bench_worker(self, drill_id: str, cancel) -> None:
        services = self.services

        def progress(line: str) -> None:
            self.post_message(BenchProgress(drill_id, line))

        try:
            report = services.bench(
                services.catalogue,
                drill_id,
                "mine",
                runner=services.runner,
                force_cpu=services.force_cpu,
                on_progress=progress,
                cancel=cancel,
            )
        except Exception as exc:  # a failed bench is reported, never a dead app
            self.post_message(BenchFinished(drill_id, error=f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(BenchFinished(drill_id, report))

    def on_bench_progress(self, message: BenchProgress) -> None:
        lines = self.session.bench_line(message.drill_id, message.line)
        if message.drill_id == self.selected:
            self.query_one(BenchPanel).show_lines(lines)

    def on_bench_finished(self, message: BenchFinished) -> None:
        if message.report is None:
            lines = [f"bench failed: {message.error}"]
        else:
            # From the screen's width, not the panel's, which depends on whether it was drawn yet.
            width = min(100, max(60, self.app.size.width - BENCH_MARGIN))
            lines = bench_report.format_report(message.report, width=width).splitlines()
            try:
                improved = bench_report.record_best(self.services.store, message.report)
            except OSError as exc:
                improved = []
                self._say(f"Could not save the best times: {exc}", severity="error")
            if improved:
                lines += ["", "New best time for: " + ", ".join(improved)]
            try:
                self._perf_coach().record_bench(message.report)
            except (OSError, YamlFileError) as exc:
                self._say(f"Could not save the perf hint: {exc}", severity="error")
        self.session.finish_bench(message.drill_id, lines)
        if message.drill_id == self.selected:
            self._show_bench(message.drill_id)
