#!/usr/bin/env python3
"""How long a learner waits for a verdict on the CPU: cold against warm, for every drill.

    python scripts/feedback_bench.py [--drills t1,t3] [--repeats 3] [--out docs/feedback-DATE.md]

For each playable drill, with its reference solution as the learner's file:

- cold `tutor check`: the command a learner types, a fresh process (torch and triton imported
  by the run's child), wall time from start to exit;
- cold run: `Runner.run` from a process that has the tutor loaded (what the app did before);
- warm run: the same run forked from the warm process (tutor.warm), as the app runs it now;
- save -> verdict in the app: the app (headless, real runner, warm process up, watch on) sees
  the solution saved into drills/mine/ and shows "Passed"; wall time from the write to the
  finished run on screen.

Medians of `--repeats` runs. A benchmark, not a test: nothing here passes or fails on a clock.
The numbers, the machine and the load it was under go into the Markdown report.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.catalogue import load_catalogue  # noqa: E402
from tutor.events import TestFinished  # noqa: E402
from tutor.paths import CoursePaths  # noqa: E402
from tutor.runner import Runner  # noqa: E402
from tutor.warm import WarmPool  # noqa: E402


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


def check_time(course: CoursePaths, drill_id: str, *, cold: bool) -> float:
    """Seconds of `tutor check`: cold (no warm process, TUTOR_NO_WARM=1), or borrowing the
    warm process this script keeps up, as `tutor check` does while the app is open."""
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tutor",
            "--root",
            str(course.root),
            "check",
            drill_id,
            "--impl",
            "solutions",
            "--cpu",
        ],
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


async def app_save_to_verdict(course: CoursePaths, drill_id: str, pool: WarmPool) -> float:
    """Write the solution into the learner's file with the app watching; seconds to "Passed"."""
    from tutor.progress import ProgressStore
    from tutor.ui.app import TutorApp
    from tutor.ui.messages import RunFinished

    catalogue = load_catalogue(course)
    drill = catalogue.drill(drill_id)
    # The learner's file starts as the starter, so the save below is a change the app sees.
    course.mine(drill.file).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(course.starter(drill.file), course.mine(drill.file))
    finished: list[float] = []

    def hook(message) -> None:
        if isinstance(message, RunFinished) and message.result.passed:
            finished.append(time.monotonic())

    app = TutorApp(
        catalogue,
        ProgressStore(course.progress_file),
        lambda c, cpu: Runner(c, force_cpu=cpu, warm=pool),
        force_cpu=True,
        watch=True,
        watch_debounce_ms=1000,
        watch_step_ms=50,
    )
    async with app.run_test(size=(140, 42), message_hook=hook) as pilot:
        await pilot.pause(1.5)  # the watcher starts just after the first frame
        started = time.monotonic()
        shutil.copyfile(course.solution(drill.file), course.mine(drill.file))
        while not finished and time.monotonic() - started < 120:
            # A plain sleep, not pilot.pause(): each pause forces the app to process and redraw,
            # work the real app never does, which took CPU from the run being timed.
            await asyncio.sleep(0.01)
    if not finished:
        raise RuntimeError(f"{drill_id}: the app showed no pass within 120 s")
    return finished[0] - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drills", default=None, help="comma-separated (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="the Markdown report to write")
    parser.add_argument("--no-app", action="store_true", help="skip the app's save -> verdict")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tutor-feedback-") as tmp:
        course = scratch_course(Path(tmp))
        catalogue = load_catalogue(course)
        drills = [d.id for d in catalogue.drills if not d.coming]
        if args.drills:
            drills = [d for d in drills if d in args.drills.split(",")]
        pool = WarmPool(course.state_dir)
        pool.ready.wait(120)
        cold, warm = Runner(catalogue, force_cpu=True), Runner(catalogue, force_cpu=True, warm=pool)
        rows = []
        for drill_id in drills:
            timed_run(warm, drill_id)  # the warm process's first run of a drill
            check = [check_time(course, drill_id, cold=True) for _ in range(args.repeats)]
            borrowed = [check_time(course, drill_id, cold=False) for _ in range(args.repeats)]
            runs = [timed_run(cold, drill_id)[0] for _ in range(args.repeats)]
            warms = [timed_run(warm, drill_id) for _ in range(args.repeats)]
            assert all(was_warm for *_, was_warm in warms), f"{drill_id}: a run went cold"
            app = None
            if not args.no_app:
                os.makedirs(course.mine("x").parent, exist_ok=True)
                app = statistics.median(
                    asyncio.run(app_save_to_verdict(course, drill_id, pool))
                    for _ in range(args.repeats)
                )
            row = (
                drill_id,
                statistics.median(check),
                statistics.median(borrowed),
                statistics.median(runs),
                statistics.median(t for t, _, _ in warms),
                statistics.median(f for _, f, _ in warms),
                app,
            )
            rows.append(row)
            print(
                f"{drill_id}: cold check {row[1]:.2f} s, check with the app open {row[2]:.2f} s, "
                f"cold run {row[3]:.2f} s, warm run {row[4]:.2f} s (first verdict {row[5]:.2f} s)"
                + (f", app save -> verdict {app:.2f} s" if app else ""),
                flush=True,
            )
        pool.close()
    report = render(rows, args.repeats)
    if args.out:
        Path(args.out).write_text(report, encoding="utf-8")
    print(report)
    return 0


def render(rows, repeats: int) -> str:
    load = os.getloadavg()
    lines = [
        f"# Feedback on the CPU, {time.strftime('%Y-%m-%d')}",
        "",
        f"`python scripts/feedback_bench.py` on {os.cpu_count()} cores (load average "
        f"{load[0]:.1f} at the end), Python {sys.version.split()[0]}; medians of {repeats} "
        "runs of each drill's reference solution.",
        "",
        "| drill | cold `tutor check` s | `tutor check`, app open s | cold run s | warm run s | "
        "warm: first verdict s | app: save -> Passed s | app / cold check |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for drill_id, check, borrowed, cold, warm, first, app in rows:
        app_cells = f"{app:.2f} | {app / check:.2f}" if app else "— | —"
        lines.append(
            f"| {drill_id} | {check:.2f} | {borrowed:.2f} | {cold:.2f} | {warm:.2f} | {first:.2f} "
            f"| {app_cells} |"
        )
    lines += [
        "",
        "cold `tutor check`: a new process, as a learner types it, with no warm process up "
        "(TUTOR_NO_WARM=1). `tutor check`, app open: the same while a warm process is up, which "
        "it borrows. cold run: the runner's child started fresh (torch and triton imported). "
        "warm run: forked from the warm process; first verdict: when its first test's result "
        "arrives (what the app shows at once). app: the solution written into drills/mine/ "
        "while the app watches (watch step 50 ms), to the run shown as passed.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
