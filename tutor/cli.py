"""The `tutor` command: the app with no arguments, and headless commands for scripts.

    tutor                         open the app (Textual)
    tutor list                    tracks and drills with their status
    tutor check DRILL [--impl mine|solutions|PATH] [--cpu] [--json]
    tutor hint DRILL              reveal the next hint stage
    tutor progress [--json]       every drill's status, runs, hints and best bench
    tutor reset DRILL             restore the starter (the old file is backed up)
    tutor lesson DRILL            print the lesson
    tutor solution DRILL          print the reference (after a pass or the last hint)
    tutor bench DRILL [--impl ...] time the kernel on a GPU
    tutor dev check [DRILL ...] [--cpu] [--json]   prove the course (for authors)
    tutor dev new ID --track T --title TITLE --functions NAME[,NAME...]   scaffold a drill
    tutor dev report|rebase|stories|po|feedback|remote-timing ...   author tools (own --help)
    tutor --on HOST [--python PATH] ...   run the kernels on HOST over ssh (remembered)

Every command takes `--lang en|zh` (else $TUTOR_LANG, the app's remembered choice, the locale:
tutor.lang.i18n). `--json` keeps ids, numbers and keys the same in both; its text fields (messages,
where, error maps, hints) are in the chosen language.
Exit codes: 0 success (check: all tests pass), 1 tests fail, 2 usage or set-up error.
Nothing here imports torch or textual at start-up: the tests run in a child process and the
app is imported only when it is opened. The commands that run kernels (the app, check, bench,
dev check) run them where `--on` says (tutor.remote.target: else $TUTOR_REMOTE, else the host
the course remembers, else here); on a host, through one ssh session (tutor.remote).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from dataclasses import asdict
from pathlib import Path

from tutor import __version__
from tutor.coach.run_hints import Coach
from tutor.course import language
from tutor.course import progress as p
from tutor.course.catalogue import Catalogue, Drill, load_catalogue
from tutor.course.paths import CourseNotFound, CoursePaths, find_root
from tutor.course.progress import ProgressError
from tutor.course.yamlfile import YamlFileError
from tutor.lang import i18n, terminal
from tutor.lang.i18n import _

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A bad drill id, a missing file: reported in one line, exit code 2."""


def _seconds(text: str) -> float:
    """A time limit: a finite number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("{text} is not a number of seconds").format(text=repr(text))
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            _("{text}: the limit must be a positive number of seconds").format(text=repr(text))
        )
    return value


def _with_lang(parser: argparse.ArgumentParser, top: bool = False) -> argparse.ArgumentParser:
    """`--lang` before or after the command (`tutor --lang zh list`, `tutor list --lang zh`);
    checked in `_main`, so an unknown one is one line (i18n.LanguageError)."""
    parser.add_argument(
        "--lang",
        metavar="en|zh",
        **({"default": None} if top else {"default": argparse.SUPPRESS}),
        help="English or Chinese (default: $TUTOR_LANG, the app's choice, the locale)",
    )
    return parser


# The author tools past check and new: each a module with its own `main(argv)`, which reads
# the rest of the command line (`tutor dev report --help`).
DEV_TOOLS = {
    "report": ("tutor.dev.report", "on a GPU machine: every verdict, bench and coach row"),
    "rebase": ("tutor.dev.rebase", "carry a drill's patches over a change to their base file"),
    "stories": ("tutor.dev.stories", "collect the English a drill's tests can show"),
    "po": ("tutor.dev.po", "compile the message catalogues, or list what they lack"),
    "feedback": ("tutor.dev.feedback", "how long a learner waits for a verdict, warm and cold"),
    "remote-timing": ("tutor.dev.remote_timing", "how long a check takes over ssh, beside here"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tutor", description=__doc__.split("\n\n")[0])
    _with_lang(parser, top=True)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--root", help="the course folder (default: found from here or $TUTOR_ROOT)"
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="run kernels on the CPU through Triton's interpreter even with a GPU",
    )
    parser.add_argument(
        "--on",
        metavar="HOST",
        default=None,
        help="run kernels on HOST over ssh (user@host or an ~/.ssh/config alias; remembered "
        "for the course; `--on local` runs them here again)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        default=None,
        help="with --on: a Python on the host that has torch and Triton (default: the tutor "
        "sets up its own there)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("list", help="tracks and drills with their status")
    check = sub.add_parser("check", help="run a drill's tests headless")
    check.add_argument(
        "drill", nargs="?", default=None, help="default: the drill in progress (tutor list)"
    )
    check.add_argument("--impl", default="mine", help="mine (default), solutions, or a file path")
    check.add_argument(
        "--cpu", action="store_true", default=argparse.SUPPRESS, help="force the CPU interpreter"
    )
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument(
        "--timeout", type=_seconds, default=None, help="seconds before the run is killed"
    )
    hint = sub.add_parser("hint", help="reveal the next hint stage for a drill")
    hint.add_argument("drill")
    hint.add_argument(
        "--perf", action="store_true", help="the next stage of the perf coach's hint (tutor bench)"
    )
    prog = sub.add_parser("progress", help="show progress (works offline, no GPU needed)")
    prog.add_argument("--json", action="store_true")
    reset = sub.add_parser("reset", help="restore the starter file (keeps a backup)")
    reset.add_argument("drill")
    lesson = sub.add_parser("lesson", help="print a drill's lesson")
    lesson.add_argument("drill")
    lesson.add_argument(
        "--answers", action="store_true", help="show the self-check answers (folded by default)"
    )
    solution = sub.add_parser("solution", help="print the reference solution once unlocked")
    solution.add_argument("drill")
    bench = sub.add_parser("bench", help="time a drill's kernels on the GPU")
    bench.add_argument("drill")
    bench.add_argument("--impl", default="mine")
    bench.add_argument("--json", action="store_true")
    dev = sub.add_parser("dev", help="for course authors: prove the course, scaffold a drill")
    dev_sub = dev.add_subparsers(dest="dev_command", metavar="DEV_COMMAND", required=True)
    dev_check = dev_sub.add_parser(
        "check", help="every starter fails, every solution passes, every mutant is named"
    )
    dev_check.add_argument("drills", nargs="*", metavar="DRILL", help="default: every drill")
    dev_check.add_argument(
        "--cpu", action="store_true", default=argparse.SUPPRESS, help="force the CPU interpreter"
    )
    dev_check.add_argument("--json", action="store_true", help="print one JSON object")
    dev_check.add_argument("--jobs", type=int, default=None, help="test runs at once")
    dev_check.add_argument(
        "--gpu",
        action="store_true",
        help="on a GPU, also bench every slow kernel (perf-*) and the solution: the perf coach",
    )
    dev_new = dev_sub.add_parser("new", help="write every file of a new drill")
    dev_new.add_argument("id")
    dev_new.add_argument("--track", required=True)
    dev_new.add_argument("--title", required=True)
    dev_new.add_argument("--functions", required=True, help="NAME[,NAME...]")
    dev_new.add_argument(
        "--language", default="triton", help="the kernels' language: triton (default) or cuda"
    )
    for name, (module, summary) in DEV_TOOLS.items():
        tool = dev_sub.add_parser(name, help=summary, add_help=False)
        tool.add_argument("rest", nargs=argparse.REMAINDER, help=f"its own options: {module}")
    for command in (*sub.choices.values(), *dev_sub.choices.values()):
        _with_lang(command)
    return parser


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: end the run in progress and leave with its exit code.

    A BaseException, as KeyboardInterrupt is, so that no `except Exception` on the way (a
    check turns a failing runner into a set-up error) takes it for an error."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def split_dev_tool(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """`tutor [options] dev TOOL ARGS...`: ARGS belong to the author tool, verbatim and in
    their order (argparse would take `--drills c2` apart: an option it does not know, then a
    value for the tool's positional rest)."""
    for i, word in enumerate(argv[:-1]):
        if word == "dev" and argv[i + 1] in DEV_TOOLS:
            return argv[: i + 2], argv[i + 2 :]
    return argv, None


def _stop(signum: int, frame: object) -> None:
    raise Stopped(signum)


def main(argv: list[str] | None = None) -> int:
    terminal.print_what_it_can()  # before any word: argparse's own too
    parser = build_parser()
    head, tool_argv = split_dev_tool(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(head)
    if tool_argv is not None:
        args.rest = tool_argv
    if args.command is not None:  # the app handles its own signals (it restores the terminal)
        for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):  # none on Windows
            if signum is not None:
                signal.signal(signum, _stop)
        # Python keeps Ctrl-C ignored when the process started with it ignored (a parent that
        # set SIG_IGN, a background job of a script): the first Ctrl-C must still end the run.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _main(args)
    except KeyboardInterrupt:
        print(
            "tutor: " + _("interrupted (Ctrl-C): the run in progress was stopped"),
            file=sys.stderr,
        )
        return 130
    except Stopped as exc:
        stopped = _("stopped by {signal}: the run in progress was stopped").format(signal=exc)
        print(f"tutor: {stopped}", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:
        # The reader went away (`tutor list | head`): say nothing more, and let Python's own
        # flush at exit find a sink instead of raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tutor: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


def _main(args: argparse.Namespace) -> int:
    try:
        i18n.activate(i18n.choose(args.lang))  # before the course is found: its errors too
        paths = CoursePaths(find_root(args.root))
        i18n.activate(i18n.choose(args.lang, remembered=language.remembered(paths.state_dir)))
        if args.command in (None, "check", "bench", "dev"):  # the commands that start runs
            _memory_limit_is_usable()
        args.host = _host(args, paths)
        try:
            if args.command is None:
                from tutor.ui.app import run_app  # Textual is imported only for the app

                return run_app(paths, force_cpu=args.cpu, host=args.host)
            from tutor.course.titles import localized

            catalogue = localized(load_catalogue(paths), i18n.current())
            store = p.ProgressStore(paths.progress_file)
            if store.warning:
                print(_("warning: {warning}").format(warning=store.warning), file=sys.stderr)
            handler = COMMANDS[args.command]
            return handler(args, catalogue, store)
        finally:
            close = getattr(args.host, "close", None)
            if close is not None:
                close()  # a remote host ends whatever of this command is left there
    except (CourseNotFound, YamlFileError, ProgressError, UsageError, i18n.LanguageError) as exc:
        print(f"tutor: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _runs_kernels(args: argparse.Namespace) -> bool:
    return args.command in (None, "check", "bench") or (
        args.command == "dev" and args.dev_command == "check"
    )


def _host(args: argparse.Namespace, paths: CoursePaths):
    """Where this command's kernels run (tutor.run.host): here, or the host `--on` (else
    $TUTOR_REMOTE, else the course's remembered one) names, connected and set up; `--on` and
    `--python` are remembered for the course's next command."""
    from tutor.remote.target import TargetError, choose, remember
    from tutor.run.host import LOCAL

    try:
        target = choose(args.on, args.python, paths.state_dir)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    if args.python is not None and target is None:
        raise UsageError(_("--python names a Python on the host: give --on HOST with it"))
    if args.on is not None or args.python is not None:
        remember(paths.writable(paths.state_dir), target)
    if not _runs_kernels(args):
        return None
    if target is None:
        refused = LOCAL.cannot_run()
        if refused and args.command is not None:  # the app opens: its runs say it
            raise UsageError(refused)
        return LOCAL
    from tutor.remote.client import RemoteError, RemoteHost

    def say(line: str) -> None:
        print(f"tutor: {line}", file=sys.stderr, flush=True)

    host = RemoteHost(
        target,
        paths,
        cpu=getattr(args, "cpu", False),
        warm=args.command in (None, "dev"),  # the app and dev check run many times
        on_progress=say,
    )
    say(_("connecting to {host}…").format(host=target.host))
    try:
        host.connect()
    except RemoteError as exc:
        host.close()
        raise UsageError(str(exc)) from None
    say(_("kernels run on {where}").format(where=host.label()))
    return host


def _memory_limit_is_usable() -> None:
    """A bad $TUTOR_MEMORY_LIMIT_MB is a set-up error, said before anything runs."""
    from tutor.run.supervisor import MemoryLimitError, default_memory_limit

    try:
        default_memory_limit()
    except MemoryLimitError as exc:
        raise UsageError(str(exc)) from None


def _drill(catalogue: Catalogue, drill_id: str):
    try:
        drill = catalogue.drill(drill_id)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    if drill.coming:
        raise UsageError(
            _("drill {drill} is not ready yet (marked as coming in drills.yaml)").format(
                drill=drill_id
            )
        )
    return drill


def cmd_list(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    from tutor.coach.report import format_list

    print(format_list(catalogue, store))
    return EXIT_OK


def cmd_check(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    from tutor.coach.check import check
    from tutor.coach.report import format_hint, format_run
    from tutor.course import workspace
    from tutor.course.hints import HintBook
    from tutor.run import collect
    from tutor.run.runner import DEFAULT_TIMEOUT_S, Runner
    from tutor.states import RunStatus

    drill = _drill(catalogue, args.drill) if args.drill else _in_progress(catalogue, store, args)
    # A broken hints file is found before the run, not after it (when the run would be lost).
    book = HintBook(catalogue.paths.hints_dir, drill.id)
    target = catalogue.paths.resolve_impl(drill.file, args.impl)
    suffix = Path(drill.file).suffix  # the drill's kernel language's
    if target.suffix != suffix and not target.is_dir():
        raise UsageError(
            _(
                "{path} is not a {suffix} file: drill {drill}'s file under test ends in {suffix}"
            ).format(path=target, suffix=suffix, drill=drill.id)
        )
    if args.impl == "mine":
        try:
            workspace.ensure_mine(catalogue, drill)
        except workspace.WorkspaceError as exc:
            raise UsageError(str(exc)) from None
    force_cpu = getattr(args, "cpu", False)
    runner = Runner(
        catalogue,
        force_cpu=force_cpu,
        timeout=args.timeout or DEFAULT_TIMEOUT_S,
        warm=_apps_warm_process(args, catalogue, force_cpu),
        host=args.host,
    )
    checked = check(
        runner,
        Coach(catalogue, store),
        drill.id,
        args.impl,
        list_tests=collect.lister(catalogue, force_cpu=force_cpu, host=args.host),
    )
    result, view, not_saved = checked.result, checked.hint, checked.not_saved
    if args.json:
        print(json.dumps(checked.to_json(), indent=2))
    else:
        print(format_run(result, book, str(catalogue.paths.root) + "/", checked.never_ran))
        if view is not None:
            print()
            print(format_hint(view, drill.id, remembered=checked.recorded))
        elif result.passed and args.impl == "mine":
            print(_("Well done. {taught}").format(taught=drill.taught))
            print(_next_drill(catalogue, store, drill.id))
    if not_saved is not None:
        print(f"tutor: {not_saved.filename}: {not_saved.strerror}", file=sys.stderr)
    if result.status == RunStatus.SETUP_ERROR or not_saved is not None:  # the message is above
        return EXIT_USAGE
    return EXIT_OK if result.passed else EXIT_FAILED


def _apps_warm_process(args, catalogue: Catalogue, force_cpu: bool):
    """The warm process the app keeps up on this machine, while it is open; a remote host
    keeps its own."""
    from tutor.run.host import LOCAL
    from tutor.run.warm import WarmPool

    if args.host is not LOCAL:
        return None
    return WarmPool.find(catalogue.paths.state_dir, cpu=force_cpu)


def _in_progress(catalogue: Catalogue, store: p.ProgressStore, args) -> Drill:
    """`tutor check` without a drill: the one in progress, named first (on stderr beside
    --json, whose stdout is one object)."""
    from tutor.ui.marks import in_progress

    drill = in_progress(catalogue, store)
    if drill is None:
        raise UsageError(_("every drill passes: name one to check it again (tutor list)"))
    said = _("Checking {drill} ({title}), the drill in progress.").format(
        drill=drill.id, title=drill.title
    )
    print(said, file=sys.stderr if args.json else sys.stdout)
    return drill


def _next_drill(catalogue: Catalogue, store: p.ProgressStore, passed: str) -> str:
    """After a pass, the next drill to take up, and how, as rustlings offers its next exercise:
    the next one not yet solved (wrapping round), its file made from the starter as `tutor
    check` makes it."""
    from tutor.ui.marks import next_unfinished

    following = next_unfinished(catalogue, store, after=passed)
    if following is None:
        return _("Every drill passes: the course is done.")
    mine = catalogue.paths.mine(following.file)
    return _(
        "Next: {drill} ({title}). Write it in {path}, then run `tutor check` (it checks the "
        "drill in progress)."
    ).format(
        drill=following.id,
        title=following.title,
        path=mine.relative_to(catalogue.paths.root)
        if mine.is_relative_to(catalogue.paths.root)
        else mine,
    )


def cmd_hint(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    from tutor.coach.report import format_hint, format_perf_hint

    drill = _drill(catalogue, args.drill)
    if args.perf:
        from tutor.coach.perf_hints import PerfCoach

        print(format_perf_hint(PerfCoach(catalogue, store).reveal_next(drill.id), drill.id))
        return EXIT_OK
    print(format_hint(Coach(catalogue, store).reveal_next(drill.id), drill.id))
    return EXIT_OK


def cmd_progress(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    from tutor.coach.report import format_progress

    if args.json:
        data = {
            "progress_file": str(store.path),
            "drills": {
                d.id: {
                    **asdict(store.drill(d.id)),
                    "hints_revealed": store.drill(d.id).hints_revealed,
                    "solved": store.drill(d.id).solved,
                }
                for d in catalogue.drills
                if not d.coming
            },
        }
        print(json.dumps(data, indent=2))
    else:
        print(format_progress(catalogue, store))
    return EXIT_OK


def cmd_reset(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    from tutor.course import workspace

    drill = _drill(catalogue, args.drill)
    mine = catalogue.paths.mine(drill.file)
    try:
        saved = workspace.reset(catalogue, drill)
    except workspace.WorkspaceError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:  # a full disk: the backup or the copy failed, and was undone
        raise UsageError(
            _("{path} was not reset ({why}); it is as it was").format(path=mine, why=exc.strerror)
        ) from None
    Coach(catalogue, store).forget_run(drill.id)  # the last run no longer describes the file
    print(
        _("{path} is the starter again.").format(path=mine)
        + (" " + _("Your file was saved to {path}.").format(path=saved) if saved else "")
    )
    return EXIT_OK


def cmd_lesson(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    drill = _drill(catalogue, args.drill)
    path = catalogue.paths.lesson(drill.id)
    if not path.is_file():
        raise UsageError(_("{path} does not exist").format(path=path))
    from tutor.coach.report import format_lesson
    from tutor.course import lessons
    from tutor.course.translations import lesson_text

    text, note = lesson_text(path, i18n.current(), catalogue.paths.root)
    how = _("`tutor lesson {drill} --answers` shows the answers").format(drill=drill.id)
    if note:
        print(f"({note})\n")
    print(format_lesson(lessons.render(text, answers=args.answers, how_to_show=how)))
    return EXIT_OK


def cmd_solution(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    from tutor.coach.report import solution_rule

    drill = _drill(catalogue, args.drill)
    if not Coach(catalogue, store).solution_unlocked(drill.id):
        rule = solution_rule(f"`tutor hint {drill.id}`")
        print(_("The solution to {drill} {rule}").format(drill=drill.id, rule=rule))
        return EXIT_FAILED
    from tutor.course.yamlfile import read_text

    print(read_text(catalogue.paths.solution(drill.file)))  # not UTF-8: one line, exit 2
    return EXIT_OK


def cmd_bench(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    from tutor import bench

    drill = _drill(catalogue, args.drill)
    report = bench.bench_drill(
        catalogue,
        drill.id,
        args.impl,
        force_cpu=args.cpu,
        warm=_apps_warm_process(args, catalogue, args.cpu),
        on_progress=lambda line: print(line, file=sys.stderr),  # compiles take a while
        host=args.host,
    )
    from tutor.coach.perf_hints import PerfCoach
    from tutor.coach.report import format_perf_hint

    view = None
    if args.impl == "mine" and report.timed:
        bench.record_best(store, report)
        view = PerfCoach(catalogue, store).record_bench(report)
    if args.json:
        print(json.dumps({**report.to_json(), "coach": asdict(view) if view else None}, indent=2))
    else:
        print(bench.format_report(report))
        if view is not None:
            print()
            print(format_perf_hint(view, drill.id))
    return EXIT_OK if report.timed else EXIT_FAILED


def cmd_dev(args, catalogue: Catalogue, store: p.ProgressStore) -> int:
    if args.dev_command in DEV_TOOLS:
        import importlib

        tool = importlib.import_module(DEV_TOOLS[args.dev_command][0])
        return tool.main(args.rest)
    if args.dev_command == "new":
        from tutor.dev.new import NewDrill, ScaffoldError, new_drill

        functions = tuple(f.strip() for f in args.functions.split(",") if f.strip())
        try:
            written = new_drill(
                catalogue.paths,
                NewDrill(args.id, args.track, args.title, functions, args.language),
            )
        except ScaffoldError as exc:
            raise UsageError(str(exc)) from None
        root = catalogue.paths.root
        print(f"New drill {args.id}: wrote")
        for path in written:
            print(f"  {path.relative_to(root)}")
        print(
            f"Next: fill in the TODOs, then `tutor dev check {args.id}` "
            "(docs/AUTHORING.md walks through it)."
        )
        return EXIT_OK
    from tutor.dev import check as devcheck
    from tutor.run.host import LOCAL
    from tutor.run.runner import Runner
    from tutor.run.warm import WarmPool

    for drill_id in args.drills:
        _drill(catalogue, drill_id)
    force_cpu = getattr(args, "cpu", False)
    host = args.host
    if args.gpu and (force_cpu or not host.has_gpu()):
        raise UsageError(_("--gpu proves the perf coach on a GPU: there is none here (or --cpu)"))
    catalogue.paths.writable(catalogue.paths.built_mutants)  # before any run: LinkRefused
    # A remote host keeps its own warm process (tutor.remote.agent).
    warm = WarmPool.for_course(catalogue.paths, cpu=force_cpu or None) if host is LOCAL else None
    try:
        if warm is not None:
            warm.wait_ready(180)  # else the runs simply go cold
        runner = Runner(catalogue, force_cpu=force_cpu, warm=warm, host=host)
        show = None if args.json else (lambda finding: print(finding.line(), flush=True))
        findings = devcheck.check_course(
            catalogue, args.drills or None, runner=runner, jobs=args.jobs, on_finding=show
        )
        if args.gpu:
            from tutor.dev.perfcheck import as_findings, check_perf

            rows = check_perf(
                catalogue,
                args.drills or None,
                warm=runner.warm,
                host=host,
                on_row=None if show is None else (lambda row: show(*as_findings([row]))),
            )
            findings += as_findings(rows)
    finally:
        if warm is not None:
            warm.close()
    failed = [f for f in findings if not f.ok]
    if args.json:
        print(json.dumps(devcheck.as_json(findings), indent=2))
    else:
        held = len(findings) - len(failed)
        summary = (
            _("{held} of {total} checks hold: the course is proven.")
            if not failed
            else _("{held} of {total} checks hold; these do not:")
        )
        print("\n" + summary.format(held=held, total=len(findings)))
        for finding in failed:
            print("  " + finding.line())
    return EXIT_OK if not failed else EXIT_FAILED


COMMANDS = {
    "list": cmd_list,
    "check": cmd_check,
    "hint": cmd_hint,
    "progress": cmd_progress,
    "reset": cmd_reset,
    "lesson": cmd_lesson,
    "solution": cmd_solution,
    "bench": cmd_bench,
    "dev": cmd_dev,
}
