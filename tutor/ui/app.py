"""The Textual app: built from plain core objects, so tests can hand it a fake runner.

    app = TutorApp(catalogue, store, runner_factory=lambda catalogue, force_cpu: FakeRunner())

`run_app` is what the command line calls for `tutor` with no arguments. Nothing here imports
torch or triton: the runner starts a child process for every run, and the GPU's name is asked
of another child, so the app is interactive well within a second.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable

from textual.app import App, SystemCommand
from textual.screen import Screen

from tutor.bench import bench_drill
from tutor.coach.run_hints import Coach
from tutor.course.catalogue import Catalogue, CatalogueError, load_catalogue
from tutor.course.paths import CoursePaths
from tutor.course.progress import ProgressStore
from tutor.course.titles import localized
from tutor.lang import i18n
from tutor.lang.i18n import _
from tutor.run.runner import Runner
from tutor.ui import cjk_wrap
from tutor.ui.environment import gpu_name
from tutor.ui.screens.drill_screen import DrillScreen
from tutor.ui.services import BenchFunction, DrillRunner, Services, TestLister, WatchSettings
from tutor.ui.session import Session

RunnerFactory = Callable[[Catalogue, bool], DrillRunner]
# Once the app is asked to end (SIGHUP, SIGTERM, or its last frame is gone) the process ends
# within this many seconds, however its shutdown goes.
EXIT_DEADLINE_S = 4
# What gives a terminal back if the app cannot: main screen, cursor on, no mouse reports, no
# bracketed paste (the modes Textual's driver turns on).
_TERMINAL_BACK = b"\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l"


def exit_within(seconds: int, code: int) -> None:
    """End this process `seconds` from now, unless it has ended by itself.

    A shutdown can wait for ever: on a worker thread stuck in a run, or on a terminal that is
    gone (once the app lived on, parented to init, every thread waiting on a futex, ignoring
    SIGTERM). SIGALRM interrupts whatever the main thread waits on; its handler gives the
    terminal back, if there still is one, and leaves with `code`.
    """

    def overdue(signum: int, frame: object) -> None:
        try:
            tty = os.open("/dev/tty", os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
            os.write(tty, _TERMINAL_BACK)
            os.close(tty)
        except OSError:
            pass  # no terminal any more
        os._exit(code)

    if not hasattr(signal, "SIGALRM"):  # Windows: a timer thread, as the alarm cannot be had
        timer = threading.Timer(seconds, overdue, (0, None))
        timer.daemon = True
        timer.start()
        return
    signal.signal(signal.SIGALRM, overdue)
    signal.alarm(seconds)


def real_runner(catalogue: Catalogue, force_cpu: bool) -> DrillRunner:
    return Runner(catalogue, force_cpu=force_cpu)


class TutorApp(App[int]):
    """Builds the services and the session; the drill screen does the rest."""

    CSS_PATH = "tutor.tcss"
    TITLE = "kernel drills"
    # ctrl+p: the command palette, for the language switch (and Textual's own commands).
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        catalogue: Catalogue,
        store: ProgressStore,
        runner_factory: RunnerFactory = real_runner,
        *,
        force_cpu: bool = False,
        watch: bool = True,
        watch_debounce_ms: int = 1000,
        watch_step_ms: int = 50,
        gpu_probe: Callable[[], str | None] = gpu_name,
        bench: BenchFunction = bench_drill,
        list_tests: TestLister | None = None,
        host_name: str = "",
    ) -> None:
        """
        Args:
            runner_factory: makes the runner from the catalogue and force_cpu.
            force_cpu: run kernels on the CPU interpreter even when there is a GPU.
            watch: start with watch on (saving a learner file re-runs its drill).
            watch_debounce_ms, watch_step_ms: how file changes are grouped (watchfiles.awatch).
            gpu_probe: returns the GPU's name or None; called once, in a worker.
            bench: checks then times a drill on the GPU (tutor.bench.bench_drill).
            list_tests: a drill's test ids, to name the tests a timed-out run never reached.
            host_name: the host the kernels run on over ssh ("" for this machine).
        """
        super().__init__()
        cjk_wrap.install()  # Chinese lines break between characters, not only at spaces
        catalogue = localized(catalogue, i18n.current())  # titles in the learner's language
        self.services = Services(
            catalogue=catalogue,
            store=store,
            coach=Coach(catalogue, store),
            runner=runner_factory(catalogue, force_cpu),
            bench=bench,
            gpu_probe=gpu_probe,
            force_cpu=force_cpu,
            watch=WatchSettings(watch, watch_debounce_ms, watch_step_ms),
            list_tests=list_tests,
            host_name=host_name,
        )
        self.session = Session()

    # The core objects by their old names, for scripts and tests that look at them.
    @property
    def catalogue(self) -> Catalogue:
        return self.services.catalogue

    @property
    def store(self) -> ProgressStore:
        return self.services.store

    @property
    def coach(self) -> Coach:
        return self.services.coach

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, DrillScreen):
            yield SystemCommand(
                "Language: English / 中文",
                _("Switch the tutor's language (the key L does too)"),
                screen.action_switch_language,
            )

    def get_default_screen(self) -> Screen:
        return DrillScreen(self.services, self.session)

    def on_mount(self) -> None:
        # SIGTERM or a closed terminal (SIGHUP) ends the app as `q` does: the run in progress is
        # cancelled and the terminal leaves the alternate screen, instead of a dead app over a
        # garbled terminal.
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)):
            try:
                loop.add_signal_handler(signum, self._end_by_signal, signum)
            except (NotImplementedError, RuntimeError):  # not the main thread (tests)
                pass

    def _end_by_signal(self, signum: int) -> None:
        exit_within(EXIT_DEADLINE_S, 128 + signum)
        self.exit(128 + signum)


def run_app(paths: CoursePaths, *, force_cpu: bool = False, host=None) -> int:
    """Open the app on the course at `paths`; returns the exit status for the command line.
    It speaks the language tutor.lang.i18n has active (the command line chose it). `host`:
    where kernels run (tutor.run.host), when not here: a connected tutor.remote.RemoteHost."""
    try:
        catalogue = localized(load_catalogue(paths), i18n.current())
    except CatalogueError as exc:
        print(f"tutor: {exc}", file=sys.stderr)
        return 2
    from tutor.run import collect
    from tutor.run.host import LOCAL
    from tutor.run.warm import WarmPool

    host = host or LOCAL
    if host is not LOCAL:
        host.on_progress = None  # a reconnection's steps must not write over the app's screen
    # The warm process imports torch and triton in the background while the app starts, so a
    # save is answered in about a second, on the GPU too (each run starts CUDA for itself). A
    # remote host keeps its own (tutor.remote.agent).
    warm = WarmPool.for_course(paths, cpu=force_cpu or None) if host is LOCAL else None
    remote = {} if host is LOCAL else {"gpu_probe": lambda: _remote_gpu(host, force_cpu)}
    app = TutorApp(
        catalogue,
        ProgressStore(paths.progress_file),
        runner_factory=lambda catalogue, cpu: Runner(
            catalogue, force_cpu=cpu, warm=warm, host=host
        ),
        force_cpu=force_cpu,
        list_tests=collect.lister(catalogue, force_cpu=force_cpu, host=host),
        host_name=host.name,
        **remote,
    )
    try:
        app.run()
    finally:
        exit_within(EXIT_DEADLINE_S, app.return_code or 0)  # threads must not keep it alive
        if warm is not None:
            warm.close()
    return app.return_code or 0


def _remote_gpu(host, force_cpu: bool) -> str | None:
    """The name of the remote host's GPU its kernels run on, or None for its CPU interpreter."""
    names = host.gpu_names()
    return None if host.runs_on_cpu(force_cpu) or not names else names[0]
