"""How long a check takes over ssh (`tutor --on HOST`) against the same check here.

    tutor dev remote-timing --on HOST [--python PATH] [--cpu] [--drill t1] [--repeats 3]

With the drill's solution as the learner's file, in a scratch copy of the course, medians of
`--repeats`:

- here, `tutor check` (a fresh process, no warm process: cold), and a run forked from a warm
  process (tutor.run.warm), as the app runs a save;
- on HOST: connecting (ssh, the bootstrap, the bundle: only what the host's store lacks), the
  first check of a session (cold: torch and triton imported by the run there), and the second
  one (forked from the host's warm process, as the app runs a save), each from the moment the
  run is asked for to its result back here; and `tutor --on HOST check`, the command a learner
  types, from start to exit.

Run it on the machine the learner edits on; for the comparison that counts (the network and the
tutor's own overhead), HOST's GPU is this machine's (`--on` its own loopback address). A
benchmark, not a test: nothing here passes or fails on a clock.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths, find_root
from tutor.remote.client import RemoteHost
from tutor.remote.target import Target
from tutor.run.runner import Runner
from tutor.run.warm import WarmPool


def scratch_course(folder: Path) -> CoursePaths:
    root = find_root()
    for name in ("drills.yaml", "drills.zh.yaml", "hints", "drills"):
        source = root / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("mine"))
        elif source.exists():
            shutil.copyfile(source, folder / name)
    return CoursePaths(folder)


def cli_seconds(course: CoursePaths, args: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "--root", str(course.root), *args],
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, TUTOR_NO_WARM="1"),
    )
    if done.returncode != 0:
        raise SystemExit(f"tutor {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return time.monotonic() - started


def run_seconds(runner: Runner, drill: str, want_warm: bool | None = None) -> float:
    if want_warm:
        time.sleep(2.0)  # a save comes a while after the last run: its spare is forked by now
    started = time.monotonic()
    result = runner.run(drill, "solutions")
    seconds = time.monotonic() - started
    if not result.passed or (want_warm is not None and result.warm != want_warm):
        raise SystemExit(f"{drill}: {result.status} warm={result.warm} {result.message}")
    return seconds


def warm_runner(runner: Runner, drill: str, patience_s: float = 300.0) -> None:
    """Run until a run is forked warm: the warm process has finished its imports."""
    deadline = time.monotonic() + patience_s
    while not runner.run(drill, "solutions").warm:
        if time.monotonic() > deadline:
            raise SystemExit("the warm process never served a run")
        time.sleep(1.0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tutor dev remote-timing", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--on", required=True, metavar="HOST")
    parser.add_argument("--python", default="", metavar="PATH")
    parser.add_argument("--cpu", action="store_true", help="the CPU interpreter, here and there")
    parser.add_argument("--drill", default="t1")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rows: dict[str, list[float]] = {}
    add = lambda name, seconds: rows.setdefault(name, []).append(seconds)  # noqa: E731
    cpu = ["--cpu"] if args.cpu else []
    remote = ["--on", args.on, *(["--python", args.python] if args.python else [])]
    with tempfile.TemporaryDirectory(prefix="tutor-remote-timing-") as tmp:
        course = scratch_course(Path(tmp))
        catalogue = load_catalogue(course)
        check = [*cpu, "check", args.drill, "--impl", "solutions"]
        cli_seconds(course, check)  # Triton's cache here holds the drill's kernels from now
        pool = WarmPool.for_course(course, cpu=args.cpu or None)
        try:
            local = Runner(catalogue, force_cpu=args.cpu, warm=pool)
            warm_runner(local, args.drill)
            for _ in range(args.repeats):
                add("here: tutor check (cold)", cli_seconds(course, check))
                add("here: a save, warm run", run_seconds(local, args.drill, want_warm=True))
        finally:
            pool.close()
        cli_seconds(course, [*remote, *check])  # the host set up, its cache filled
        for _ in range(args.repeats):
            add(f"{args.on}: tutor --on check (cold)", cli_seconds(course, [*remote, *check]))
            host = RemoteHost(Target(args.on, args.python), course, cpu=args.cpu, warm=True)
            started = time.monotonic()
            host.connect()
            add(f"{args.on}: connect (ssh, bundle, agent)", time.monotonic() - started)
            try:
                runner = Runner(catalogue, force_cpu=args.cpu, host=host)
                add(f"{args.on}: first check of a session", run_seconds(runner, args.drill))
                warm_runner(runner, args.drill)
                add(
                    f"{args.on}: a save, warm run",
                    run_seconds(runner, args.drill, want_warm=True),
                )
            finally:
                host.close()
    width = max(map(len, rows))
    print(f"{args.drill}, medians of {args.repeats} ({'CPU interpreter' if args.cpu else 'GPU'})")
    for name, seconds in rows.items():
        print(f"  {name:<{width}}  {statistics.median(seconds):6.2f} s   {seconds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
