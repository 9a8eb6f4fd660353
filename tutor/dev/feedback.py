"""How long a learner waits for a verdict, on the GPU or the CPU: cold against warm, every drill.

    tutor dev feedback [--backend cuda|cpu] [--drills t1,t3] [--repeats 3]
        [--out docs/reports/DATE/feedback-warm-runs-CARD.md]
        [--json docs/reports/DATE/feedback-warm-runs-CARD.json]

The backend is the GPU when this machine has one (tutor.run.gpu), else the CPU interpreter. Each
drill's kernels are run once before anything is timed, so Triton's cache in the course
(.tutor/triton-cache) holds them, as it does for a learner's unchanged kernels. For each
playable drill, with its reference solution as the learner's file:

- cold `tutor check`: the command a learner types, a fresh process (torch and triton imported
  by the run's child), wall time from start to exit;
- cold run: `Runner.run` from a process that has the tutor loaded (what the app did before);
- warm run: the same run forked from the warm process (tutor.run.warm), as the app runs it now;
- save -> verdict in the app: the app (headless, real runner, warm process up, watch on), with
  the drill open as a learner has the one they are editing, sees the solution saved into
  drills/mine/ and shows "Passed"; wall time from the write to the finished run on screen, and
  to the first test's verdict.

Medians of `--repeats` runs. A benchmark, not a test: nothing here passes or fails on a clock.
The numbers, the machine and the load it was under go into the Markdown report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths, find_root
from tutor.run import zygote
from tutor.run.events import TestFinished
from tutor.run.gpu import machine_has_gpu, nvml_gpus
from tutor.run.runner import Runner
from tutor.run.warm import WarmPool

ROOT = find_root()  # the course whose drills are timed (copied into a scratch folder)


def scratch_course(tmp: Path) -> CoursePaths:
    for name in ("drills.yaml", "hints", "drills"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source, tmp / name, ignore=shutil.ignore_patterns("mine", "__pycache__")
            )
        else:
            shutil.copyfile(source, tmp / name)
    return CoursePaths(tmp)


def check_time(course: CoursePaths, drill_id: str, *, cold: bool, cpu: bool) -> float:
    """Seconds of `tutor check`: cold (no warm process, TUTOR_NO_WARM=1), or borrowing the
    warm process this script keeps up, as `tutor check` does while the app is open."""
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "tutor", "--root", str(course.root), "check", drill_id]
        + ["--impl", "solutions"]
        + (["--cpu"] if cpu else []),
        capture_output=True,
        check=False,
        cwd=course.root,
        env=dict(os.environ, TUTOR_NO_WARM="1" if cold else "0"),
    )
    return time.monotonic() - started


def timed_run(runner: Runner, drill_id: str) -> tuple[float, float, bool]:
    """Seconds to the run's end and to its first test's result (the first verdict), and warm."""
    started = time.monotonic()
    first: list[float] = []

    def note(event) -> None:
        if isinstance(event, TestFinished) and not first:
            first.append(time.monotonic() - started)

    result = runner.run(drill_id, "solutions", on_event=note)
    assert result.passed, (drill_id, result.status, result.diagnoses)
    return time.monotonic() - started, first[0], result.warm


async def app_save_to_verdict(
    course: CoursePaths, drill_id: str, pool: WarmPool, cpu: bool
) -> tuple[float, float]:
    """Write the solution into the learner's file with the app watching; seconds to the first
    test's verdict and to "Passed"."""
    from tutor.course.progress import ProgressStore
    from tutor.ui.app import TutorApp
    from tutor.ui.messages import RunEvent, RunFinished
    from tutor.ui.widgets.drill_list import DrillList

    catalogue = load_catalogue(course)
    drill = catalogue.drill(drill_id)
    # The learner's file starts as the starter, so the save below is a change the app sees.
    course.mine(drill.file).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(course.starter(drill.file), course.mine(drill.file))
    finished: list[float] = []
    verdicts: list[float] = []

    def hook(message) -> None:
        if isinstance(message, RunEvent) and isinstance(message.event, TestFinished):
            verdicts.append(time.monotonic())
        if isinstance(message, RunFinished) and message.result.passed:
            finished.append(time.monotonic())

    app = TutorApp(
        catalogue,
        ProgressStore(course.progress_file),
        lambda c, force_cpu: Runner(c, force_cpu=force_cpu, warm=pool),
        force_cpu=cpu,
        watch=True,
        watch_debounce_ms=1000,
        watch_step_ms=50,
    )
    async with app.run_test(size=(140, 42), message_hook=hook) as pilot:
        await pilot.pause(1.5)  # the watcher starts just after the first frame
        # The learner edits the drill on show: opening another drill's lesson (hundreds of
        # Markdown blocks to lay out) is not part of a save's wait.
        screen = app.screen
        screen.query_one(DrillList).select_drill(drill_id)
        opened = time.monotonic()
        while screen.selected != drill_id:
            if time.monotonic() - opened > 30:
                raise RuntimeError(f"{drill_id}: the app did not open the drill within 30 s")
            await pilot.pause(0.05)
        await pilot.pause(1.0)
        started = time.monotonic()
        verdicts.clear()
        shutil.copyfile(course.solution(drill.file), course.mine(drill.file))
        while not finished and time.monotonic() - started < 120:
            # A plain sleep, not pilot.pause(): each pause forces the app to process and redraw,
            # work the real app never does, which took CPU from the run being timed.
            await asyncio.sleep(0.01)
    if not finished:
        raise RuntimeError(f"{drill_id}: the app showed no pass within 120 s")
    return verdicts[0] - started, finished[0] - started


@dataclass
class Row:
    """One drill's medians, in seconds (the JSON report's row)."""

    drill: str
    backend: str
    cold_check_s: float
    borrowed_check_s: float | None  # None with --quick
    cold_run_s: float | None  # None with --quick
    warm_run_s: float
    first_verdict_s: float
    app_save_to_first_verdict_s: float | None
    app_save_to_passed_s: float | None


def measure(course: CoursePaths, drill_id: str, pool: WarmPool, cpu: bool, args) -> Row:
    catalogue = load_catalogue(course)
    cold = Runner(catalogue, force_cpu=cpu)
    warm = Runner(catalogue, force_cpu=cpu, warm=pool)
    timed_run(warm, drill_id)  # compiles the kernels into the course's cache (GPU)
    check = [
        check_time(course, drill_id, cold=True, cpu=cpu)
        for _ in range(args.cold_repeats or args.repeats)
    ]
    borrowed = runs = None
    if not args.quick:
        borrowed = [check_time(course, drill_id, cold=False, cpu=cpu) for _ in range(args.repeats)]
        runs = [timed_run(cold, drill_id)[0] for _ in range(args.repeats)]
    warms = [timed_run(warm, drill_id) for _ in range(args.repeats)]
    assert all(was_warm for *_, was_warm in warms), f"{drill_id}: a run went cold"
    app_first = app_passed = None
    if not args.no_app:
        os.makedirs(course.mine("x").parent, exist_ok=True)
        saves = [
            asyncio.run(app_save_to_verdict(course, drill_id, pool, cpu))
            for _ in range(args.repeats)
        ]
        app_first = statistics.median(first for first, _ in saves)
        app_passed = statistics.median(passed for _, passed in saves)
    return Row(
        drill_id,
        "cpu" if cpu else "cuda",
        statistics.median(check),
        statistics.median(borrowed) if borrowed else None,
        statistics.median(runs) if runs else None,
        statistics.median(t for t, _, _ in warms),
        statistics.median(f for _, f, _ in warms),
        app_first,
        app_passed,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tutor dev feedback", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--backend", choices=("cuda", "cpu"), default=None)
    parser.add_argument("--drills", default=None, help="comma-separated (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cold-repeats",
        type=int,
        default=None,
        help="cold `tutor check`s per drill (default: --repeats; each takes 6-9 s on a GPU)",
    )
    parser.add_argument("--out", default=None, help="the Markdown report to write")
    parser.add_argument("--json", default=None, help="the JSON rows to write")
    parser.add_argument("--no-app", action="store_true", help="skip the app's save -> verdict")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip the check borrowing the warm process and the cold run (the cold check stays)",
    )
    args = parser.parse_args(argv)
    cpu = (args.backend or ("cuda" if machine_has_gpu() else "cpu")) == "cpu"
    with tempfile.TemporaryDirectory(prefix="tutor-feedback-") as tmp:
        course = scratch_course(Path(tmp))
        catalogue = load_catalogue(course)
        drills = [d.id for d in catalogue.drills if not d.coming]
        if args.drills:
            drills = [d for d in drills if d in args.drills.split(",")]
        pool = WarmPool.for_course(course, cpu=cpu)
        pool.ready.wait(180)
        rows = []
        for drill_id in drills:
            try:
                row = measure(course, drill_id, pool, cpu, args)
            except Exception as exc:  # noqa: BLE001 - one drill failing keeps the others
                print(f"{drill_id}: not measured: {type(exc).__name__}: {exc}", flush=True)
                continue
            rows.append(row)
            print(json.dumps(asdict(row)), flush=True)
        facts = asdict(pool.facts)
        pool.close()
    report = render(rows, args.repeats, args.cold_repeats or args.repeats, cpu, facts)
    for path in (args.out, args.json):
        if path:  # docs/reports/<date>/ is new on the first report of a day
            Path(path).parent.mkdir(parents=True, exist_ok=True)
    if args.out:
        Path(args.out).write_text(report, encoding="utf-8")
    if args.json:
        data = [asdict(row) for row in rows]
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(report)
    return 0


def render(rows: list[Row], repeats: int, cold_repeats: int, cpu: bool, facts: dict) -> str:
    load = os.getloadavg()
    spares = os.environ.get(zygote.SPARE) != "0"
    where = "the CPU interpreter" if cpu else (", ".join(nvml_gpus() or ()) or "a GPU")
    import torch
    import triton

    lines = [
        f"# Feedback on {where}, {time.strftime('%Y-%m-%d')}",
        "",
        f"`tutor dev feedback` on {os.cpu_count()} cores (load average "
        f"{load[0]:.1f} at the end), Python {sys.version.split()[0]}, torch {torch.__version__}, "
        f"triton {triton.__version__}; medians of {repeats} runs of each drill's reference "
        "solution. The warm process "
        + ("started no CUDA" if not facts.get("cuda_started") else "STARTED CUDA")
        + " (its audit of its own imports); it kept a spare run forked ahead"
        + (": yes (primed with CUDA on a GPU)." if spares else f": no ({zygote.SPARE}=0).")
        + (f" Cold checks: {cold_repeats} a drill." if cold_repeats != repeats else ""),
        "",
        "| drill | cold `tutor check` s | `tutor check`, app open s | cold run s | warm run s | "
        "warm: first verdict s | app: save -> first verdict s | app: save -> Passed s | "
        "app / cold check |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        app = row.app_save_to_passed_s
        lines.append(
            f"| {row.drill} | {row.cold_check_s:.2f} | {_s(row.borrowed_check_s)} | "
            f"{_s(row.cold_run_s)} | {row.warm_run_s:.2f} | {row.first_verdict_s:.2f} | "
            f"{_s(row.app_save_to_first_verdict_s)} | {_s(app)} | "
            + (f"{app / row.cold_check_s:.2f} |" if app else "— |")
        )
    lines += [
        "",
        "cold `tutor check`: a new process, as a learner types it, with no warm process up "
        "(TUTOR_NO_WARM=1). `tutor check`, app open: the same while a warm process is up, which "
        "it borrows. cold run: the runner's child started fresh (torch and triton imported). "
        "warm run: forked from the warm process; first verdict: when its first test's result "
        "arrives (what the app shows at once). app: the solution written into drills/mine/ "
        "while the app watches (watch step 50 ms), to the first test's verdict and to the run "
        "shown as passed. Every kernel was compiled once before the timings (Triton's cache in "
        "the course), as a learner's unchanged kernels are.",
        "",
    ]
    return "\n".join(lines)


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    sys.exit(main())
