"""Everything one session on a GPU machine should bring back, in one command from the repo root.

    tutor dev report --out "$OUT"
        [--drills t3,f3] [--skip-cpu] [--skip-gpu] [--skip-bench] [--no-compile]
        [--budget 480] [--gpu-workers 12] [--cpu-workers 4] [--timed-workers 4]

1. Verdicts: every drill's tests against its solution and against every file in
   drills/mutants/<drill>/, on the GPU and on the CPU interpreter side by side. A mutant's name,
   `<diagnosis>__<variant>.py`, says which diagnosis must come first; `correct__*.py` must pass.
   On the GPU each file runs in a process of its own, `--gpu-workers` at once: correctness
   runs time nothing, so sharing the card between them is harmless. On the CPU a drill's files
   run in one child (`tutor dev check --cpu`'s way), `--cpu-workers` drills at once.
   Meanwhile every bench case's torch.compile is compiled once, in parallel, to fill the
   on-disk compile caches (nothing is timed while the verdicts run).
2. Benches: every drill's bench cases for the reference solutions (tutor.bench, one child
   process per drill), with torch eager, torch.compile (a fresh process per shape, which
   now finds its kernels compiled) and CUDA-graph times.
3. The perf coach (tutor dev check --gpu's half that needs a GPU, tutor.dev.perfcheck): every slow
   but correct kernel (drills/mutants/<drill>/perf-*) benched at its case must get its perf
   diagnosis first, and every solution none (read off step 2's bench of it); the rows go under
   `coach` in the JSON. The coach gets what is left of --budget: on an H200 the verdicts and
   benches take about 400 s, the coach's 44 rows about 280 more, so a second call with
   `--skip-cpu --skip-gpu --skip-bench --drills <those left>` proves the rest.
   Where Liger-Kernel is installed (tutor/dev/liger.py says how, from a wheel), its
   cross-entropy and softmax are timed beside f5's and t4's solutions, started once the first
   bench ends, under the same lock, for issue 27's "ahead of Liger-Kernel".
   Benches and coach run `--timed-workers` processes at once: their set-up overlaps, and each
   timed stretch holds the card's lock (tutor.bench.gpu_lock), so no two time at once. The
   Time table says how much of their time the lock was held: near all of it, the card is the
   limit; far less, their compiles are, and more workers would finish sooner.
4. docs/reports/<date>/<what>.md (card, driver, versions, anchors, verdicts, the coach, bench
   numbers, targets) and <what>.json beside it (everything raw), copied into --out. <what>
   says what the run covers, e.g. `verdicts-bench-coach-all-drills` or `verdicts-b2-f3`; a
   second run of the same on the same day gets `-2`. docs/gpu-verification.md cites them.
   Every timed case also becomes a row of docs/reports/bench.csv, one file for all the reports.

Test runs are forked from warm processes (tutor.run.warm), one for each backend.

The report is rewritten after every step, so a run stopped by the time limit still leaves what
it measured; past --budget seconds no new step starts. One failure never stops the others.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tutor import bench
from tutor.bench.record import BenchRecord, CaseTimes
from tutor.course.catalogue import Catalogue, load_catalogue
from tutor.course.paths import CoursePaths, find_root
from tutor.dev import check as devcheck
from tutor.run import results as r
from tutor.run.runner import Runner
from tutor.states import RunStatus

ROOT = find_root()  # the course: its docs/ take the report

DOCS = ROOT / "docs"
GPU_TEST_TIMEOUT_S = 90.0  # a first JIT compile of each kernel variant, then a killed hang
CPU_TEST_TIMEOUT_S = 150.0  # the interpreter, with other runs sharing the cores
BENCH_TIMEOUT_S = 300.0  # one drill's benches, torch.compile of every shape included
WARM_WORKERS = 12  # torch.compile processes at once while the verdicts run
LARGE_TARGET_PCT = 85.0
# Decode shapes: at most this much above a copy of the same bytes in a graph. Issue 27 first
# asked for 1 µs above an empty launch, which no kernel that reads and then writes its bytes
# meets (a copy of fused_add_rmsnorm's T = 16 bytes alone is 0.8 µs above it on an H100:
# docs/reports/2026-12-06/probes-f5-f3.md); the copy is the floor of the shape's own traffic.
DECODE_SLACK_US = 0.5
LAUNCH_BOUND_US = 1.0  # a decode shape whose bytes take less than this at copy bandwidth
COMPILE_SLACK = 0.03  # a reference may be this much slower than torch.compile (issue 27)
WHOLE_REPORT_S = 540.0  # every verdict of the course and every drill's bench, in one run
LIGER_DRILLS = ("f5", "t4")  # the drills tutor.dev.liger sets beside Liger-Kernel
LIGER_MIN_S = 60.0  # time the Liger step needs to be worth starting (compiles, then times)
LIGER_STEP = "liger"  # its name among the run's steps
HOLDS_FILE = "gpu-timing.holds"  # in the state folder: the timing lock's holds this run


def log(message: str) -> None:
    print(f"[gpu-report {time.strftime('%H:%M:%S')}] {message}", flush=True)


# ---- what each file is expected to do: tutor dev check's own targets and judgement ----------


@dataclass
class Verdict:
    status: str  # a RunResult status, or "not run" / "error"
    first: str | None = None  # the first (most specific) diagnosis
    backend: str = ""
    duration: float = 0.0
    message: str = ""
    ok: bool | None = None  # as tutor dev check demands; None when the file was not run

    @property
    def text(self) -> str:
        if self.status == RunStatus.PASSED:
            return "pass"
        if self.status in (RunStatus.FAILED, RunStatus.CRASHED) and self.first:
            return self.first if self.status == RunStatus.FAILED else f"{self.first} (crashed)"
        return self.status


def verdict_of(target: devcheck.Target, result: r.RunResult) -> Verdict:
    finding = devcheck.judge(target, result)
    return Verdict(
        result.status,
        result.diagnoses[0] if result.diagnoses else None,
        result.backend,
        result.duration,
        finding.message[:300],
        finding.ok,
    )


# ---- the run ------------------------------------------------------------------------------------


@dataclass
class State:
    """Everything the report shows; written to disk after every step."""

    date: str
    started: float
    options: dict[str, Any]
    name: str = "gpu-report"  # the report's file name, without .md / .json (report_name)
    env: dict[str, Any] = field(default_factory=dict)
    targets: list[devcheck.Target] = field(default_factory=list)
    perf_targets: int = 0  # the files the coach must bench (tutor.dev.perfcheck.perf_targets)
    gpu: dict[tuple[str, str], Verdict] = field(default_factory=dict)
    cpu: dict[tuple[str, str], Verdict] = field(default_factory=dict)
    benches: dict[str, bench.BenchReport] = field(default_factory=dict)
    # drill -> set once its bench is over (or skipped): the coach judges the solution on it
    benched: dict[str, threading.Event] = field(default_factory=dict)
    # (drill, case label) -> {"eager": row, "compile": row}: each timed again in a fresh process
    independent: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    coach: list[dict[str, Any]] = field(default_factory=list)  # tutor.dev.perfcheck rows
    liger: dict[str, Any] = field(default_factory=dict)  # tutor.dev.liger's JSON
    timing_lock: dict[str, float] = field(default_factory=dict)  # lock_use's summary
    notes: list[str] = field(default_factory=list)
    finished: float | None = None  # the run's length, once it is done
    # every step's (start, end) in seconds into the run: where a slow run's time went
    steps: dict[str, tuple[float, float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # guards the tables
    write_lock: threading.Lock = field(default_factory=threading.Lock)  # one writer at a time

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tutor dev report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="a folder to copy the report into")
    parser.add_argument("--drills", default=None, help="comma-separated drill ids (default: all)")
    parser.add_argument("--skip-cpu", action="store_true", help="no CPU-interpreter verdicts")
    parser.add_argument("--skip-gpu", action="store_true", help="no GPU verdicts")
    parser.add_argument("--skip-bench", action="store_true", help="no benches")
    parser.add_argument("--skip-coach", action="store_true", help="no perf-coach proof")
    parser.add_argument("--no-compile", action="store_true", help="benches without torch.compile")
    parser.add_argument(
        "--compile-drills",
        default="",
        help="drills (comma-separated) whose benches include torch.compile (default: all)",
    )
    parser.add_argument(
        "--check-columns",
        default="",
        help="drills (comma-separated) whose eager and torch.compile columns are timed again, "
        "each shape in a fresh process",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=480.0,
        help="seconds after which no new step starts (default 480)",
    )
    parser.add_argument(
        "--gpu-workers",
        type=int,
        default=12,
        help="GPU test runs at once (default 12; 1 = one after another)",
    )
    parser.add_argument(
        "--cpu-workers", type=int, default=4, help="drills proven at once on the CPU interpreter"
    )
    parser.add_argument(
        "--timed-workers",
        type=int,
        default=4,
        help="bench and coach processes at once (default 4); each times the card alone",
    )
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    state = State(
        date=time.strftime("%Y-%m-%d"),
        started=time.monotonic(),
        options={k: v for k, v in vars(args).items()},
    )
    deadline = state.started + args.budget
    try:
        catalogue = load_catalogue(CoursePaths(ROOT))
    except Exception as exc:  # noqa: BLE001 - without the catalogue there is nothing to do
        log(f"cannot read drills.yaml: {exc}")
        state.notes.append(f"cannot read drills.yaml: {exc}")
        write_report(state, args.out)
        return 1
    drill_ids = [d.id for d in catalogue.drills if not d.coming]
    if args.drills:
        wanted = [d.strip() for d in args.drills.split(",") if d.strip()]
        unknown = [d for d in wanted if d not in drill_ids]
        if unknown:
            state.notes.append(f"unknown or unplayable drills ignored: {', '.join(unknown)}")
        drill_ids = [d for d in drill_ids if d in wanted]
    state.targets = [t for d in drill_ids for t in devcheck.targets(catalogue, catalogue.drill(d))]
    from tutor.dev.perfcheck import perf_targets

    if not args.skip_coach:
        state.perf_targets = sum(
            len(perf_targets(catalogue, catalogue.drill(d))) for d in drill_ids
        )
    state.name = free_name(
        DOCS / "reports" / state.date,
        report_name(args, drill_ids, all_drills=[d.id for d in catalogue.drills if not d.coming]),
    )
    log(f"{len(drill_ids)} drills, {len(state.targets)} files to check; budget {args.budget:.0f} s")

    _step(state, "environment", lambda: state.env.update(environment()))
    write_report(state, args.out)
    has_gpu = bool(state.env.get("cuda"))
    if not has_gpu:
        state.notes.append(
            "torch sees no GPU here: the GPU verdicts ran on the CPU interpreter "
            "and nothing was timed"
        )
    benching = not args.skip_bench and has_gpu
    warming = None
    if benching and not args.no_compile:
        # torch.compile's caches are on disk: fill them in parallel while the verdicts (which
        # time nothing) use the card, so each timed fresh compile process later starts warm.
        warming = threading.Thread(
            target=_step,
            args=(state, "warm compiles", lambda: warm_compiles(state, catalogue, drill_ids, args)),
            daemon=True,
        )
        warming.start()
    _step(state, "verdicts", lambda: run_verdicts(state, catalogue, deadline, args))
    write_report(state, args.out)
    if warming is not None:
        warming.join(max(0.0, deadline - time.monotonic()))
    coaching = not args.skip_coach and has_gpu
    if benching or coaching:
        _step(
            state,
            "benches and coach",
            lambda: run_timed(state, catalogue, drill_ids, deadline, args, benching, coaching),
        )
    state.finished = state.elapsed
    log(f"done in {state.finished:.0f} s")
    paths = write_report(state, args.out)
    for path in paths:
        log(f"wrote {path}")
    return 0


def bench_step(drill_id: str) -> str:
    """The name of a drill's bench among the run's steps (State.steps)."""
    return f"bench {drill_id}"


def _step(state: State, name: str, action) -> None:
    """Run one step, its start and end kept; a failure becomes a note in the report."""
    start = state.elapsed
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - one failure must not cost the rest of the report
        log(f"{name} failed: {type(exc).__name__}: {exc}")
        state.notes.append(
            f"{name} failed: {type(exc).__name__}: {exc}\n" + traceback.format_exc()[-1500:]
        )
    finally:
        with state.lock:
            state.steps[name] = (round(start, 1), round(state.elapsed, 1))


def environment() -> dict[str, Any]:
    """Card, driver and versions; probed in a child so this script never imports torch."""
    env: dict[str, Any] = {"python": platform.python_version(), "host": platform.node()}
    probe = (
        "import json, platform, torch, triton\n"
        "cuda = torch.cuda.is_available()\n"
        "print(json.dumps({'torch': torch.__version__, 'triton': triton.__version__,"
        " 'cuda': cuda, 'cuda_runtime': torch.version.cuda,"
        " 'device': torch.cuda.get_device_name(0) if cuda else None,"
        " 'device_count': torch.cuda.device_count() if cuda else 0}))"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT
        )
        env.update(json.loads(done.stdout.strip().splitlines()[-1]))
    except Exception as exc:  # noqa: BLE001
        env["probe_error"] = f"{type(exc).__name__}: {exc}"
    if shutil.which("nvidia-smi"):
        try:
            done = subprocess.run(
                [
                    "nvidia-smi",
                    "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                    "--format=csv,noheader",
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
            first = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
            parts = [part.strip() for part in first.split(",")]
            if len(parts) >= 3:
                env.update(smi_name=parts[0], driver=parts[1], memory=parts[2])
            if len(parts) >= 4:
                env["max_sm_clock"] = parts[3]
        except Exception as exc:  # noqa: BLE001
            env["smi_error"] = f"{type(exc).__name__}: {exc}"
    log("environment: " + ", ".join(f"{k}={v}" for k, v in env.items()))
    return env


def run_bench(
    state: State,
    catalogue: Catalogue,
    drill_id: str,
    deadline: float,
    args: argparse.Namespace,
) -> None:
    try:
        _bench(state, catalogue, drill_id, deadline, args)
    finally:
        state.benched.setdefault(drill_id, threading.Event()).set()


def _bench(
    state: State,
    catalogue: Catalogue,
    drill_id: str,
    deadline: float,
    args: argparse.Namespace,
) -> None:
    left = deadline - time.monotonic()
    if not catalogue.drill(drill_id).bench:
        return
    if left < 20:
        state.notes.append(f"bench {drill_id}: not run, the time for benches was used up")
        log(f"bench {drill_id}: skipped (time)")
        return
    timeout = min(BENCH_TIMEOUT_S, left)
    log(f"bench {drill_id} (solutions), up to {timeout:.0f} s")
    report = bench.bench_drill(
        catalogue,
        drill_id,
        "solutions",
        verify=False,
        compile=not args.no_compile and _compiles(args, drill_id),
        timeout=timeout,
        on_progress=lambda line: log(f"    {drill_id}: {line}"),
    )
    with state.lock:
        state.benches[drill_id] = report
    log(
        f"bench {drill_id}: {report.status} in {report.duration:.0f} s"
        + (f" ({report.message})" if report.message and not report.timed else "")
    )
    if drill_id in args.check_columns.split(",") and report.timed:
        check_columns(state, catalogue, drill_id, report, deadline, args)


def _compiles(args: argparse.Namespace, drill_id: str) -> bool:
    """Whether `--compile-drills` (all drills when empty) includes this drill's torch.compile."""
    return not args.compile_drills or drill_id in args.compile_drills.split(",")


def warm_compiles(
    state: State, catalogue: Catalogue, drill_ids: list[str], args: argparse.Namespace
) -> None:
    """Compile every bench case's torch.compile once (no timing), WARM_WORKERS at a time."""
    from tutor.bench.child import isolated

    drills = [d for d in drill_ids if _compiles(args, d)]
    jobs = [
        (drill_id, case, catalogue.paths.bench_recipe(drill_id))
        for drill_id in drills
        for case in catalogue.drill(drill_id).bench
    ]
    started = time.monotonic()

    def warm(job) -> None:
        drill_id, case, recipe = job
        found = isolated(case, recipe, "compile", graph=False, warm_only=True)
        took = found.get("compile_s")
        log(f"warm compile {drill_id} {case.label}: {took} s {found.get('error', '')}".rstrip())

    with ThreadPoolExecutor(max_workers=WARM_WORKERS) as pool:
        list(pool.map(warm, jobs))
    log(f"warm compiles: {len(jobs)} cases in {time.monotonic() - started:.0f} s")


def check_columns(
    state: State,
    catalogue: Catalogue,
    drill_id: str,
    report: bench.BenchReport,
    deadline: float,
    args: argparse.Namespace,
) -> None:
    """Time torch eager and torch.compile again, each shape in a fresh process of its own.

    The bench's comparison columns are only worth showing if an independent measurement agrees
    with them; the report puts both side by side.
    """
    from tutor.bench.child import isolated

    recipe = catalogue.paths.bench_recipe(drill_id)
    drill = catalogue.drill(drill_id)
    for case in drill.bench:
        modes = ("eager",) if args.no_compile else ("eager", "compile")
        for mode in modes:
            if time.monotonic() > deadline:
                state.notes.append(f"independent {drill_id} {case.label}: not run (time)")
                return
            found = isolated(case, recipe, mode, graph=True)
            state.independent.setdefault((drill_id, case.label), {})[mode] = found
            log(f"independent {mode} {drill_id} {case.label}: {found.get('per_call_us') or found}")


def run_timed(
    state: State,
    catalogue: Catalogue,
    drill_ids: list[str],
    deadline: float,
    args: argparse.Namespace,
    benching: bool,
    coaching: bool,
) -> None:
    """The benches and the perf coach, `--timed-workers` processes at once.

    Their untimed work (starting, importing torch, compiling kernels and torch.compile's graphs,
    making inputs) overlaps; every timed stretch holds the card's lock (tutor.bench.gpu_lock),
    so no two of them time at once (every bench of the course names the same lock). They
    start in `timed_order`.
    """
    from tutor.bench.gpu_lock import HOLDS_ENV
    from tutor.run.warm import WarmPool

    holds = catalogue.paths.state_dir / HOLDS_FILE
    holds.parent.mkdir(parents=True, exist_ok=True)
    holds.write_text("", encoding="utf-8")  # this run's holds only
    os.environ[HOLDS_ENV] = str(holds)  # every bench, Liger and coach process inherits it
    began = time.time()
    pool = None
    if coaching:
        pool = WarmPool.for_course(catalogue.paths, cpu=False)
        pool.ready.wait(180)
    actions = {}
    if benching:
        state.benched.update({d: threading.Event() for d in drill_ids})
        for drill_id in drill_ids:
            actions[bench_step(drill_id)] = lambda d=drill_id: run_bench(
                state, catalogue, d, deadline, args
            )
    liger = [d for d in LIGER_DRILLS if d in drill_ids]
    if benching and liger and importlib.util.find_spec("liger_kernel") is not None:
        actions[LIGER_STEP] = lambda: run_liger(state, catalogue, liger, deadline)
    coaches = {}  # drill -> its perf targets: the coach takes the drills with most first
    if coaching:
        from tutor.dev.perfcheck import perf_targets

        for drill_id in drill_ids:
            actions[coach_step(drill_id)] = lambda d=drill_id: run_coach(
                state, catalogue, d, deadline, args, pool
            )
            coaches[drill_id] = len(perf_targets(catalogue, catalogue.drill(drill_id)))
    benches = {d: len(catalogue.drill(d).bench) for d in drill_ids} if benching else {}
    order = timed_order(benches, LIGER_STEP in actions, coaches, args.timed_workers)
    jobs = [(name, actions[name]) for name in order]

    def job_step(job) -> None:
        name, action = job
        _step(state, name, action)
        write_report(state, args.out)

    try:
        with ThreadPoolExecutor(max_workers=max(1, args.timed_workers)) as workers:
            list(workers.map(job_step, jobs))
    finally:
        if pool is not None:
            pool.close()
        os.environ.pop(HOLDS_ENV, None)
        state.timing_lock = lock_use(holds, began, time.time())
        write_report(state, args.out)


def lock_use(holds: Path, began: float, ended: float) -> dict[str, float]:
    """How the timed steps between `began` and `ended` (wall clock) used the card's timing
    lock: seconds held, in how many stretches, seconds waited for, out of `span_s`."""
    from tutor.bench.gpu_lock import read_holds

    mine = [hold for hold in read_holds(holds) if began <= hold.taken <= ended]
    return {
        "span_s": round(ended - began, 1),
        "held_s": round(sum(hold.released - hold.taken for hold in mine), 1),
        "waited_s": round(sum(hold.waited for hold in mine), 1),
        "stretches": len(mine),
    }


def coach_step(drill_id: str) -> str:
    """The name of a drill's perf-coach proof among the run's steps."""
    return f"coach {drill_id}"


def timed_order(
    benches: dict[str, int], liger: bool, coaches: dict[str, int], workers: int
) -> list[str]:
    """The order the timed steps start in: benches, the longest first (`benches`: a drill's
    cases), so that none is left alone at the end; the Liger step as soon as the first bench
    ends, since issue 27's targets against Liger-Kernel need it (behind every bench, a slow
    machine left it no time: 2026-12-06); then the coach, the drills with the most files first.
    """
    order = [bench_step(d) for d in sorted(benches, key=lambda d: -benches[d])]
    if liger:
        order.insert(min(max(1, workers), len(order)), LIGER_STEP)
    return order + [coach_step(d) for d in sorted(coaches, key=lambda d: -coaches[d])]


def run_liger(state: State, catalogue: Catalogue, drills: list[str], deadline: float) -> None:
    """Liger-Kernel beside the solutions of `drills` (tutor.dev.liger in a process of its
    own, without torch eager, which the benches timed), every timed stretch under the benches'
    lock; its JSON goes into state.liger."""
    from tutor.bench.gpu_lock import LOCK_ENV, LOCK_FILE

    left = deadline - time.monotonic()
    if left < LIGER_MIN_S:
        state.notes.append("liger: not run, the time for benches was used up")
        return
    env = {**os.environ, LOCK_ENV: str(catalogue.paths.state_dir / LOCK_FILE)}
    env.pop("TRITON_INTERPRET", None)
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "tutor.dev.liger", "--out", folder]
        command += ["--no-eager", "--drills", ",".join(drills)]
        log(f"liger: {' '.join(drills)}, up to {left:.0f} s")
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=left)
        except subprocess.TimeoutExpired:
            state.notes.append(f"liger: stopped by the time budget after {left:.0f} s")
            return
        found = Path(folder, "probe-liger.json")
        if done.returncode != 0 or not found.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
            state.notes.append(f"liger: tutor.dev.liger exited {done.returncode}: {last}")
            return
        with state.lock:
            state.liger = json.loads(found.read_text(encoding="utf-8"))
    log(f"liger: {len(state.liger.get('rows', []))} rows")


def run_coach(
    state: State,
    catalogue: Catalogue,
    drill_id: str,
    deadline: float,
    args: argparse.Namespace,
    pool,
) -> None:
    """Bench one drill's perf targets, each in a process forked from the GPU's warm `pool`."""
    from dataclasses import asdict as as_dict

    from tutor.dev.perfcheck import check_perf, perf_targets

    if time.monotonic() > deadline:
        state.notes.append(f"coach {drill_id}: not run (time)")
        return

    reports: dict[str, bench.BenchReport] = {}  # file -> its bench, for a miss's evidence

    def keep(target, report: bench.BenchReport) -> None:
        reports[target.name] = report

    def record(row) -> None:
        # judged as it ends: a bench stopped by the report's budget ends at the deadline
        if not row.ok and row.got.startswith("not timed") and time.monotonic() >= deadline - 1:
            state.notes.append(f"coach {row.drill}/{row.file}: cut off by the time budget")
            log(f"coach {row.drill}/{row.file}: cut off (time)")
            return
        log(f"coach {row.drill}/{row.file}: {row.got} ({'ok' if row.ok else 'NOT ok'})")
        entry = as_dict(row)
        report = reports.get(row.file)
        if not row.ok and report is not None:
            entry["bench"] = report.to_json()  # the times and facts the miss was judged on
        with state.lock:
            state.coach.append(entry)

    rows = check_perf(
        catalogue,
        [drill_id],
        warm=pool,
        on_row=record,
        on_report=keep,
        made=lambda target: _solution_bench(state, target),
        deadline=deadline,
    )
    left_out = len(perf_targets(catalogue, catalogue.drill(drill_id))) - len(rows)
    if left_out:
        state.notes.append(f"coach {drill_id}: {left_out} file(s) not benched (time)")


def _solution_bench(state: State, target) -> bench.BenchReport | None:
    """The bench phase's report of the drill's solution, when the coach's target is the
    solution at the drill's first case, which that bench timed already; else None (bench it)."""
    done = state.benched.get(target.drill)
    if target.name != devcheck.SOLUTION or target.cases != (0,) or done is None:
        return None
    done.wait()
    report = state.benches.get(target.drill)
    return report if report is not None and report.timed and report.rows else None


def run_verdicts(
    state: State, catalogue: Catalogue, deadline: float, args: argparse.Namespace
) -> None:
    """Every file's verdict on the GPU (a process each, `--gpu-workers` at once, as a learner's
    runs are) and on the CPU interpreter (a drill's files in one child, as `tutor dev check
    --cpu` proves them), side by side."""
    os.environ.setdefault("OMP_NUM_THREADS", "2")  # many interpreter runs share the cores
    from tutor.run.warm import WarmPool

    sides = [cpu for cpu, skip in ((True, args.skip_cpu), (False, args.skip_gpu)) if not skip]
    pools = {cpu: WarmPool.for_course(catalogue.paths, cpu=cpu) for cpu in sides}
    for pool in pools.values():
        pool.ready.wait(180)  # else the runs simply go cold

    def record(target: devcheck.Target, on_cpu: bool, verdict: Verdict) -> None:
        tag, table = ("cpu", state.cpu) if on_cpu else ("gpu", state.gpu)
        mark = {True: "as expected", False: "NOT as expected", None: ""}[verdict.ok]
        log(f"{tag} {target.drill}/{target.name}: {verdict.text} {mark} ({verdict.duration:.1f} s)")
        with state.lock:
            table[(target.drill, target.name)] = verdict

    def check_on_gpu(target: devcheck.Target) -> None:
        left = deadline - time.monotonic()
        if left < 10:
            verdict = Verdict("not run", message="the time budget was used up")
        else:
            try:
                runner = Runner(
                    catalogue,
                    force_cpu=False,
                    timeout=min(GPU_TEST_TIMEOUT_S, left),
                    warm=pools[False],
                )
                verdict = verdict_of(target, runner.run(target.drill, str(target.path)))
            except Exception as exc:  # noqa: BLE001
                verdict = Verdict("error", message=f"{type(exc).__name__}: {exc}")
        record(target, False, verdict)

    def prove_on_cpu() -> None:
        runner = Runner(catalogue, force_cpu=True, timeout=CPU_TEST_TIMEOUT_S, warm=pools[True])
        for target, result in devcheck.prove(runner, state.targets, jobs=args.cpu_workers):
            if result is None:
                verdict = Verdict("not run", message=devcheck.judge(target, None).message, ok=False)
            else:
                verdict = verdict_of(target, result)
            record(target, True, verdict)

    with ThreadPoolExecutor(max_workers=max(1, args.gpu_workers) + 1) as workers:
        jobs = []
        if not args.skip_cpu:
            jobs.append(workers.submit(prove_on_cpu))
        if not args.skip_gpu:
            # The solutions first: they matter most if time runs short.
            ordered = sorted(state.targets, key=lambda t: t.name != "solution")
            jobs += [workers.submit(check_on_gpu, t) for t in ordered]
        for number, job in enumerate(jobs):
            job.result()
            if number % 20 == 0:
                write_report(state, args.out)
    for pool in pools.values():
        pool.close()


# ---- the report ---------------------------------------------------------------------------------


def report_name(args: argparse.Namespace, drill_ids: list[str], all_drills: list[str]) -> str:
    """What a run covers, as its report's name: `verdicts-bench-coach-all-drills`, `bench-t1-t2`."""
    parts = [
        part
        for part, skipped in (
            ("verdicts", args.skip_gpu and args.skip_cpu),
            ("bench", args.skip_bench),
            ("coach", args.skip_coach),
        )
        if not skipped
    ]
    drills = "all-drills" if drill_ids == all_drills else "-".join(drill_ids) or "no-drills"
    return "-".join([*(parts or ["environment"]), drills])


def free_name(folder: Path, name: str) -> str:
    """`name`, or `name-2`, `name-3`, ...: the first that no report in `folder` has yet."""
    candidate, n = name, 1
    while (folder / f"{candidate}.md").exists():
        n += 1
        candidate = f"{name}-{n}"
    return candidate


# Columns of docs/reports/bench.csv: one row per timed case of a report, every report's rows in
# one file (as Liger-Kernel keeps its benchmark data), so a case can be followed across runs.
# A time is `<side>_<time>` as the bench record names them (tutor.bench.record): `mine` is the
# file benched, the reference solution in a report.
BENCH_COLUMNS = (
    "date",
    "report",  # <date>/<name>: the report the row comes from
    "device",
    "torch",
    "triton",
    "drill",
    "case",
    "dtype",
    "mine_graph_us",  # GPU time per call, CUDA-graph replay: what the targets are judged on
    "mine_per_call_us",  # triton's do_bench median: includes the host's launch cost
    "graph_pct_copy",  # of the card's device-to-device copy bandwidth
    "tflops",
    "eager_graph_us",
    "compile_graph_us",
    # the reference timed in turn with compile's graph, in compile's own process (from the
    # fifteenth session on; empty before): the side "as fast as torch.compile" is judged on
    "reference_beside_compile_graph_us",
    # decode shapes: a torch copy of their bytes timed in turn with them (from the nineteenth
    # session on; empty before and for other shapes): the floor they are judged against
    "copy_floor_graph_us",
    # a CUDA C++ drill's Triton sibling, timed in turn with the reference in compile's process
    # (from the twenty-eighth session on; empty before and for other drills)
    "sibling_graph_us",
)
# Three columns' names before the bench record: a file written with them reads the same.
RENAMED_COLUMNS = {
    "graph_us": "mine_graph_us",
    "do_bench_us": "mine_per_call_us",
    "reference_beside_compile_us": "reference_beside_compile_graph_us",
}


def _against_compile(row: Any, us: float | None, timer: str) -> tuple[str, str, bool | None]:
    """The target "as fast as torch.compile" for a bench of the reference solution: on the two
    graphs timed in turn in compile's own process where the bench has them (one clock for
    both; tutor.bench.isolated), else on the bench's time against compile's from its process.
    Where compiling eager would give eager's library kernel back (m3's SDPA), the recipe names
    what torch.compile writes instead (flex_attention), and the target says so."""
    times = row.times
    compiled = times.compile.graph_us if times.mine.graph_us else times.compile.per_call_us
    mine, where = us, ""
    beside = times.reference_beside_compile.graph_us
    if times.mine.graph_us and beside and times.compile.graph_us:
        mine, where = beside, ", in turn in compile's process"
    compiled_as = f"'s {row.compiled_as}" if row.compiled_as else ""
    return (
        f"as fast as torch.compile{compiled_as}, within {COMPILE_SLACK:.0%} ({timer}{where})",
        _times_against(mine, compiled),
        None if mine is None or compiled is None else mine <= compiled * (1 + COMPILE_SLACK),
    )


def _against_sibling(row: Any) -> tuple[str, str, bool | None]:
    """Issue 57's target for a CUDA C++ drill: its reference no slower than the Triton drill that
    computes the same function (the recipe's `sibling`), the two graphs timed in turn in
    torch.compile's process (one clock for both), within COMPILE_SLACK."""
    mine, sibling = row.times.reference_beside_compile.graph_us, row.times.sibling.graph_us
    name = row.sibling_as.removesuffix(".py")
    return (
        f"no slower than the Triton sibling {name}, within {COMPILE_SLACK:.0%} (graph, in turn)",
        _times_against(mine, sibling),
        None if mine is None or sibling is None else mine <= sibling * (1 + COMPILE_SLACK),
    )


def _times_against(mine: float | None, other: float | None) -> str:
    """Two times and their ratio, as every target shows them: 9.70 µs vs 9.60 µs (1.01×)."""
    ratio = f" ({mine / other:.2f}×)" if mine and other else ""
    return f"{_fmt(mine, ' µs', 2)} vs {_fmt(other, ' µs', 2)}{ratio}"


def _ahead_of_eager(
    us: float | None, eager: float | None, pct: float | None, timer: str
) -> tuple[str, str, bool | None]:
    """Issue 27's target where the reference must read its rows twice, which keeps plain `tl`
    short of copy bandwidth (accepted): ahead of torch eager here, of torch.compile in its own
    row, and of Liger-Kernel where the report timed it."""
    return (
        f"ahead of torch eager ({timer}; the rows are read twice, so not a share of copy "
        "bandwidth)",
        f"{_times_against(us, eager)}; {_fmt(pct, '%', 1)} of copy",
        None if us is None or eager is None else us < eager,
    )


def liger_cases(liger: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """tutor.dev.liger's rows as case -> side ("solution", "Liger-Kernel", ...) -> row."""
    cases: dict[str, dict[str, dict[str, Any]]] = {}
    for row in liger.get("rows") or []:
        cases.setdefault(row.get("case", "?"), {})[row.get("side", "?")] = row
    return cases


def _against_liger(sides: dict[str, dict[str, Any]]) -> tuple[str, str, bool | None]:
    """Ahead of Liger-Kernel, both timed in one process: in CUDA graphs where both can be
    captured, else per call with do_bench (Liger's cross-entropy reads a count back to the
    host, which no graph can hold)."""
    mine, theirs = sides.get("solution") or {}, sides.get("Liger-Kernel") or {}
    key = "graph_us" if mine.get("graph_us") and theirs.get("graph_us") else "do_bench_us"
    us, other = mine.get(key), theirs.get(key)
    timer = "graph" if key == "graph_us" else "do_bench, per call"
    return (
        f"ahead of Liger-Kernel ({timer}, in one process)",
        _times_against(us, other),
        None if us is None or other is None else us < other,
    )


def bench_rows(data: dict[str, Any], report: str) -> list[dict[str, Any]]:
    """The timed cases of a report's JSON (report_json), each bench read as the bench record it
    is (tutor.bench.record), as rows of bench.csv."""
    env = data.get("env") or {}
    rows = []
    for drill, timed in sorted((data.get("benches") or {}).items()):
        record = BenchRecord.from_json(timed)
        for row in record.rows:
            times = row.times
            if not times.mine.timed:
                continue  # the case failed or was never reached
            rows.append(
                {
                    "date": data.get("date", ""),
                    "report": report,
                    "device": env.get("device") or record.device,
                    "torch": env.get("torch") or record.torch,
                    "triton": env.get("triton") or record.versions.get("triton") or "",
                    "drill": drill,
                    "case": row.label,
                    "dtype": row.dtype,
                    "mine_graph_us": _rounded(times.mine.graph_us),
                    "mine_per_call_us": _rounded(times.mine.per_call_us),
                    "graph_pct_copy": _rounded(row.rates.graph_pct_copy),
                    "tflops": _rounded(row.rates.tflops),
                    "eager_graph_us": _rounded(times.eager.graph_us),
                    "compile_graph_us": _rounded(times.compile.graph_us),
                    "reference_beside_compile_graph_us": _rounded(
                        times.reference_beside_compile.graph_us
                    ),
                    "copy_floor_graph_us": _rounded(times.copy_floor.graph_us),
                    "sibling_graph_us": _rounded(times.sibling.graph_us),
                }
            )
    return rows


def _rounded(value: Any) -> float | str:
    return round(value, 2) if isinstance(value, int | float) else ""


def read_bench_csv(path: Path) -> list[dict[str, str]]:
    """bench.csv's rows, their columns by today's names (RENAMED_COLUMNS); [] with no file."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as old:
        return [
            {RENAMED_COLUMNS.get(name, name): value for name, value in row.items()}
            for row in csv.DictReader(old)
        ]


def update_bench_csv(path: Path, report: str, rows: list[dict[str, Any]]) -> None:
    """Put `rows` in the CSV in place of `report`'s earlier ones (a report is written again
    after every step), keeping every other report's rows as they are."""
    kept = read_bench_csv(path)
    others = [row for row in kept if row.get("report") != report]
    if not rows and len(others) == len(kept):
        return  # this report timed nothing, and had no rows: the file stays as it is
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as new:
        writer = csv.DictWriter(new, fieldnames=BENCH_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows([*others, *rows])
    os.replace(tmp, path)


def write_report(state: State, out: str | None) -> list[Path]:
    """docs/reports/<date>/<name>.md and .json, and copies in `out`; never raises."""
    with state.write_lock:
        return _write_report(state, out)


def _write_report(state: State, out: str | None) -> list[Path]:
    with state.lock:
        data = report_json(state)
        try:
            text = render_markdown(state, data)
        except Exception:  # noqa: BLE001 - the raw JSON still gets written
            text = (
                f"# GPU report {state.date}\n\nThe report could not be rendered:\n\n```\n"
                f"{traceback.format_exc()}```\n"
            )
    written = []
    folders = [DOCS / "reports" / state.date] + ([Path(out)] if out else [])
    stem = state.name
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for suffix, body in ((".md", text), (".json", json.dumps(data, indent=2, default=str))):
                path = folder / f"{stem}{suffix}"
                tmp = path.with_name(f".{path.name}.tmp")
                tmp.write_text(body, encoding="utf-8")
                os.replace(tmp, path)
                written.append(path)
        except OSError as exc:
            log(f"could not write into {folder}: {exc}")
    table = DOCS / "reports" / "bench.csv"
    try:
        update_bench_csv(table, f"{state.date}/{stem}", bench_rows(data, f"{state.date}/{stem}"))
    except (OSError, csv.Error) as exc:
        log(f"could not update {table}: {exc}")
    return written


def report_json(state: State) -> dict[str, Any]:
    verdicts = []
    for target in state.targets:
        key = (target.drill, target.name)
        gpu, cpu = state.gpu.get(key), state.cpu.get(key)
        verdicts.append(
            {
                "drill": target.drill,
                "file": target.name,
                "path": str(target.path.relative_to(ROOT))
                if target.path.is_relative_to(ROOT)
                else str(target.path),
                "expected": target.expect,
                "gpu": asdict(gpu) if gpu else None,
                "cpu": asdict(cpu) if cpu else None,
                "gpu_as_expected": gpu.ok if gpu else None,
                "cpu_as_expected": cpu.ok if cpu else None,
            }
        )
    return {
        "date": state.date,
        "elapsed_s": round(state.elapsed, 1),
        "options": state.options,
        "env": state.env,
        "anchors": anchors(state),
        "verdicts": verdicts,
        "benches": {k: v.to_json() for k, v in state.benches.items()},
        "independent": [
            {"drill": d, "case": label, **found} for (d, label), found in state.independent.items()
        ],
        "targets": targets(state),
        "coach": state.coach,
        "liger": state.liger,
        "notes": state.notes,
        "steps": {name: list(span) for name, span in state.steps.items()},
        "timing_lock": state.timing_lock,
    }


def anchors(state: State) -> dict[str, Any]:
    """Copy bandwidth and empty launch from the benches, else from the cache on disk."""
    for report in state.benches.values():
        if report.copy_gbps or report.launch_us:
            return {
                "copy_gbps": report.copy_gbps,
                "launch_us": report.launch_us,
                "launch_graph_us": report.launch_graph_us,
                "from": "bench",
            }
    try:
        cached = json.loads((ROOT / ".tutor" / "bandwidth.json").read_text(encoding="utf-8"))
        entry = cached.get("devices", {}).get(state.env.get("device") or "", {})
        if entry:
            return {
                **{k: entry.get(k) for k in ("copy_gbps", "launch_us", "launch_graph_us")},
                "from": ".tutor/bandwidth.json",
            }
    except (OSError, ValueError, AttributeError):
        pass
    return {}


def targets(state: State) -> list[dict[str, Any]]:
    """The targets of issue 27, case by case; `met` is None where a number is missing.

    Each large memory-bound shape at its recipe's share of copy bandwidth (85% unless it says),
    each compute-bound shape at its share of torch eager's speed (cuBLAS, SDPA); none more than
    3% slower than torch.compile; decode shapes within 0.5 µs of a copy of their own bytes in a
    graph, where those bytes take less than 1 µs at copy bandwidth (a 16-row matmul streams
    its 32 MB weight: its target is its share of cuBLAS's speed). GPU time from CUDA-graph
    replay where it was measured (do_bench also counts the host's launch cost).
    """
    anchor = anchors(state)
    launch_graph, copy_gbps = anchor.get("launch_graph_us"), anchor.get("copy_gbps")
    found = []

    def add(case: str, target: str, measured: str, met: bool | None) -> None:
        found.append({"case": case, "target": target, "measured": measured, "met": met})

    rereads = set()  # the cases whose rows the reference must read twice
    for drill_id, report in state.benches.items():
        for row in report.rows:
            case = f"{drill_id} {row.short_label}"
            times, graphed = row.times, row.times.mine.graph_us
            us = graphed or times.mine.per_call_us
            timer = "graph" if graphed else "do_bench"
            eager = times.eager.graph_us if graphed else times.eager.per_call_us
            pct = row.rates.graph_pct_copy if graphed else row.rates.pct_copy
            if row.rereads:
                rereads.add(case)
            if row.flops:
                share = row.target or 1.0
                ratio = eager / us if eager and us else None
                add(
                    case,
                    f"≥ {share:.0%} of torch eager's speed ({timer})",
                    f"{_fmt(us, ' µs', 2)} vs {_fmt(eager, ' µs', 2)}"
                    + (f" ({ratio:.1%})" if ratio else ""),
                    None if ratio is None else ratio >= share,
                )
            elif row.large and row.rereads:
                add(case, *_ahead_of_eager(us, eager, pct, timer))
            elif row.large:
                goal = row.target or LARGE_TARGET_PCT
                add(
                    case,
                    f"≥ {goal:.0f}% of copy bandwidth ({timer})",
                    _fmt(pct, "%", 1),
                    None if pct is None else pct >= goal,
                )
            add(case, *_against_compile(row, us, timer))
            if row.sibling_as:
                add(case, *_against_sibling(row))
            # GB/s is 1e3 bytes a µs; without the copy anchor every decode row keeps the target
            transfer_us = row.bytes / (copy_gbps * 1e3) if copy_gbps else 0.0
            if row.decode and not row.flops and transfer_us < LAUNCH_BOUND_US:
                floor = times.copy_floor.graph_us
                add(
                    case,
                    f"within {DECODE_SLACK_US} µs of a copy of its bytes (graph)",
                    f"{_fmt(graphed, ' µs', 2)} vs copy {_fmt(floor, ' µs', 2)} "
                    f"(empty launch {_fmt(launch_graph, ' µs', 2)})",
                    None
                    if graphed is None or floor is None
                    else graphed <= floor + DECODE_SLACK_US,
                )
    timed_by_liger = liger_cases(state.liger)
    for case in sorted(rereads):
        if case in timed_by_liger:
            add(case, *_against_liger(timed_by_liger[case]))
        elif case.split()[0] in LIGER_DRILLS:  # shown, not counted: the Liger step did not run
            add(case, "ahead of Liger-Kernel", "not timed (the notes say why)", None)
    if state.finished is not None and not state.options.get("drills"):
        # the whole course in one run (#27): every file's verdict on both sides, every bench
        verdicts = sum(v.ok is not None for v in [*state.gpu.values(), *state.cpu.values()])
        benched = sum(report.timed for report in state.benches.values())
        drills = len({target.drill for target in state.targets})
        bench_steps = {bench_step(target.drill) for target in state.targets}
        ends = [end for name, (_, end) in state.steps.items() if name in bench_steps]
        over = max(ends) if ends else state.finished  # when the last bench ended
        add(
            "the report",
            f"every file's verdict and every drill benched, in {WHOLE_REPORT_S / 60:.0f} min",
            f"{over:.0f} s; {verdicts} of {2 * len(state.targets)} verdicts, "
            f"{benched} of {drills} drills benched",
            over <= WHOLE_REPORT_S and verdicts == 2 * len(state.targets) and benched == drills > 0,
        )
        # The coach takes the time the benches leave, and beside them the card is busy 95% of
        # the time (2026-12-06): the rows left for time are proven by a call of their own
        # (--skip-gpu --skip-cpu --skip-bench), so a run that only ran short is not counted.
        # No row when the coach was not asked for (--skip-coach, or no GPU).
        if state.perf_targets:
            ran, right = len(state.coach), sum(row.get("ok", False) for row in state.coach)
            left_for_time = ran < state.perf_targets and right == ran
            add(
                "the perf coach",
                "every slow kernel's perf diagnosis and every solution's none",
                f"{ran} of {state.perf_targets} coach rows, {right} as expected"
                + ("; the rest left for a call of their own" if left_for_time else ""),
                None if left_for_time else right == ran == state.perf_targets,
            )
    return found


def _fmt(value: float | None, unit: str = "", digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


def _mark(flag: bool | None) -> str:
    return {True: "yes", False: "**no**", None: "—"}[flag]


def render_markdown(state: State, data: dict[str, Any]) -> str:
    env, anchor = state.env, data["anchors"]
    options = " ".join(
        f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}")
        for k, v in state.options.items()
        if v not in (None, False)
    )
    card = env.get("device") or env.get("smi_name") or "no GPU seen by torch"
    if env.get("memory"):
        card += f" ({env['memory']}, max SM clock {env.get('max_sm_clock', '?')})"
    lines = [
        f"# GPU report {state.date}",
        "",
        f"Made by `tutor dev report {options}` in {state.elapsed:.0f} s. "
        f"Raw data: [{state.name}.json]({state.name}.json).",
        "",
        "## Machine",
        "",
        f"- Card: {card}",
        f"- Driver: {env.get('driver', '—')}; CUDA (torch): {env.get('cuda_runtime', '—')}",
        f"- torch {env.get('torch', '—')}, triton {env.get('triton', '—')}, "
        f"Python {env.get('python', '—')}",
        "- Device-to-device copy (2 GiB, read + write, do_bench median): "
        f"{_fmt(anchor.get('copy_gbps'), ' GB/s', 0)}",
        "- Empty Triton kernel launch (do_bench median): "
        f"{_fmt(anchor.get('launch_us'), ' µs', 2)}; in a CUDA graph: "
        f"{_fmt(anchor.get('launch_graph_us'), ' µs', 2)}",
        "",
    ]
    lines += _verdict_section(data["verdicts"])
    lines += coach_section(data["coach"])
    lines += _bench_section(state)
    lines += liger_section(state.liger)
    lines += _target_section(data["targets"])
    lines += _time_section(data["steps"], data.get("timing_lock") or {})
    if state.notes:
        lines += ["## Notes", ""]
        for note in state.notes:
            head, *rest = note.splitlines()
            lines.append(f"- {head}")
            if rest:
                lines += ["", "  ```", *[f"  {line}" for line in rest], "  ```"]
        lines.append("")
    return "\n".join(lines)


def _time_section(steps: dict[str, list[float]], timing_lock: dict[str, float]) -> list[str]:
    """Each step's start and length (seconds into the run), the earliest first, and how much
    of the timed steps' time the card's timing lock was held."""
    if not steps:
        return []
    lines = ["## Time", "", "| step | from s | to s | took s |", "|---|---|---|---|"]
    for name, (start, end) in sorted(steps.items(), key=lambda item: item[1]):
        lines.append(f"| {name} | {start:.0f} | {end:.0f} | {end - start:.0f} |")
    if timing_lock.get("span_s"):
        share = 100 * timing_lock["held_s"] / timing_lock["span_s"]
        lines += [
            "",
            f"The card's timing lock was held {timing_lock['held_s']:.0f} s of the "
            f"{timing_lock['span_s']:.0f} s of benches and coach ({share:.0f}%), in "
            f"{timing_lock['stretches']:.0f} timed stretches; processes waited "
            f"{timing_lock['waited_s']:.0f} s for it in all. Held most of the time, the card "
            "is what the benches queue for; held little, their compiles and set-up are.",
        ]
    return lines + [""]


def _verdict_section(verdicts: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Verdicts",
        "",
        "First diagnosis of each file (the one the tutor shows); `pass` = every test passed.",
        "",
        "| drill | file | expected | GPU | CPU interpreter | as expected (GPU / CPU) |",
        "|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        gpu = Verdict(**v["gpu"]).text if v["gpu"] else "—"
        if v["gpu"] and v["gpu"]["backend"] == bench.CPU_BACKEND:
            gpu += " (ran on the CPU)"
        cpu = Verdict(**v["cpu"]).text if v["cpu"] else "—"
        lines.append(
            f"| {v['drill']} | `{v['file']}` | {v['expected']} | {gpu} | {cpu} | "
            f"{_mark(v['gpu_as_expected'])} / {_mark(v['cpu_as_expected'])} |"
        )
    for side in ("gpu", "cpu"):
        flags = [v[f"{side}_as_expected"] for v in verdicts]
        ran = [f for f in flags if f is not None]
        lines.append("")
        missing = f", {len(flags) - len(ran)} not run" if len(ran) < len(flags) else ""
        lines.append(f"{side.upper()}: {sum(ran)} of {len(ran)} run as expected{missing}.")
    differ = [
        v
        for v in verdicts
        if v["gpu"] and v["cpu"] and Verdict(**v["gpu"]).text != Verdict(**v["cpu"]).text
    ]
    if differ:
        lines += [
            "",
            "GPU and CPU disagree on: "
            + ", ".join(
                f"{v['drill']}/`{v['file']}` (GPU {Verdict(**v['gpu']).text}, "
                f"CPU {Verdict(**v['cpu']).text})"
                for v in differ
            )
            + ".",
        ]
    unexpected = [
        v for v in verdicts if v["gpu_as_expected"] is False or v["cpu_as_expected"] is False
    ]
    if unexpected:
        lines += ["", "What the unexpected ones said:", ""]
        for v in unexpected:
            for side in ("gpu", "cpu"):
                if v[f"{side}_as_expected"] is False and v[side]:
                    lines.append(
                        f"- {side.upper()} {v['drill']}/`{v['file']}`: "
                        f"{v[side]['status']} — {v[side]['message'] or '(no message)'}"
                    )
    return lines + [""]


def coach_section(rows: list[dict[str, Any]]) -> list[str]:
    """The perf coach's proof: each slow kernel's expected and measured perf diagnosis."""
    if not rows:
        return []
    lines = [
        "## The perf coach",
        "",
        "Every slow but correct kernel (drills/mutants/*/perf-*) benched at its case must get "
        "its perf diagnosis first; every solution none (`slower` names no cause: the solution "
        "is slower than torch eager there).",
        "",
        "| drill | file | expected | got | as expected | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        detail = row.get("detail", "").replace("|", "/")
        lines.append(
            f"| {row['drill']} | `{row['file']}` | {row['expected']} | {row['got']} | "
            f"{_mark(row['ok'])} | {detail[:160]} |"
        )
    held = sum(bool(row["ok"]) for row in rows)
    return lines + ["", f"{held} of {len(rows)} as expected.", ""]


def _bench_section(state: State) -> list[str]:
    lines = [
        "## Benchmarks (reference solutions)",
        "",
        "µs: do_bench median with the L2 flushed before each call. GB/s: the fewest bytes "
        "the op must move (inputs read once, outputs written once). graph: GPU time per "
        "call replayed in a CUDA graph, inputs rotated over more than twice the L2.",
        "",
    ]
    if not state.benches:
        return lines + ["Not run.", ""]
    lines += [
        "| case | solution µs | GB/s | % copy | eager µs | compile µs | "
        "graph µs (solution / eager / compile) |",
        "|---|---|---|---|---|---|---|",
    ]
    problems = []
    for drill_id, report in state.benches.items():
        if not report.rows:
            problems.append(f"{drill_id}: {report.status}: {report.message}")
        for row in report.rows:
            times = row.times
            graphs = (times.mine.graph_us, times.eager.graph_us, times.compile.graph_us)
            graph = " / ".join(_fmt(x, "", 2) for x in graphs)
            cells = (
                f"{drill_id} {row.short_label} {row.dtype}",
                _fmt(times.mine.per_call_us, "", 2),
                _fmt(row.rates.gbps, "", 0),
                _fmt(row.rates.pct_copy, "%", 0),
                _fmt(times.eager.per_call_us, "", 2),
                _fmt(times.compile.per_call_us, "", 2),
                graph,
            )
            lines.append("| " + " | ".join(cells) + " |")
            problems += [f"{drill_id} {row.short_label}: {k}: {e}" for k, e in row.errors.items()]
            problems += [f"{drill_id} {row.short_label}: {n}" for n in row.notes]
        problems += [f"{drill_id}: {n}" for n in report.notes]
        if report.rows and not report.timed:
            problems.append(f"{drill_id}: {report.status}: {report.message}")
    if problems:
        lines += ["", *[f"- {p}" for p in problems]]
    return lines + [""] + _independent_section(state)


def _independent_section(state: State) -> list[str]:
    """The bench's eager and compile columns beside the same timed in fresh processes.

    Eager in a fresh process against eager in the bench's own says how much a process's history
    (its allocations, its earlier kernels) moves a small shape's time: the bench times the
    learner's kernel in its own process and torch.compile in a fresh one."""
    if not state.independent:
        return []
    lines = [
        "### The comparison columns, measured independently",
        "",
        "Each shape timed again in a process of its own (tutor.bench.isolated: one compile, "
        "`dynamic=False`, warmed up; do_bench median, then in a CUDA graph). The bench's own "
        "compile column comes from such a process too; eager is timed in the bench's process. "
        "µs, bench / fresh process.",
        "",
        "| case | eager | eager, graph | compile | compile, graph |",
        "|---|---|---|---|---|",
    ]
    rows = {(d, row.label): row for d, report in state.benches.items() for row in report.rows}

    def pair(bench_us: float | None, fresh_us: float | None) -> str:
        return f"{_fmt(bench_us, '', 2)} / {_fmt(fresh_us, '', 2)}"

    for (drill_id, label), found in state.independent.items():
        row = rows.get((drill_id, label))
        times = row.times if row else CaseTimes()
        eager, compiled = found.get("eager", {}), found.get("compile", {})
        lines.append(
            f"| {drill_id} {label} "
            f"| {pair(times.eager.per_call_us, eager.get('per_call_us'))} "
            f"| {pair(times.eager.graph_us, eager.get('graph_us'))} "
            f"| {pair(times.compile.per_call_us, compiled.get('per_call_us'))} "
            f"| {pair(times.compile.graph_us, compiled.get('graph_us'))} |"
        )
    return lines + [""]


def liger_section(liger: dict[str, Any]) -> list[str]:
    """Every side tutor.dev.liger timed, the solution's beside Liger-Kernel's."""
    if not liger.get("rows"):
        return []
    lines = [
        f"## Liger-Kernel {liger.get('liger_kernel', '')}".rstrip(),
        "",
        "Timed beside the solutions in one process of their own (tutor.dev.liger), each "
        "output checked against torch eager first; share: the fewest bytes at copy bandwidth.",
        "",
        "| case | side | do_bench µs | share | graph µs | share | max diff |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in liger["rows"]:
        diff = row.get("max_diff")
        lines.append(
            f"| {row.get('case', '?')} | {row.get('side', '?')} "
            f"| {_fmt(row.get('do_bench_us'), '', 2)} | {_fmt(row.get('pct_copy_do_bench'), '%')} "
            f"| {_fmt(row.get('graph_us'), '', 2)} | {_fmt(row.get('pct_copy_graph'), '%')} "
            f"| {f'{diff:.3g}' if isinstance(diff, int | float) else '—'} |"
        )
    return lines + [""]


def _target_section(found: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Targets",
        "",
        f"Each large shape ≥ {LARGE_TARGET_PCT:.0f}% of copy bandwidth (or its recipe's share); "
        "matmul and attention at their recipe's share of cuBLAS / SDPA; none more than "
        f"{COMPILE_SLACK:.0%} slower than torch.compile (for attention, torch.compile's "
        "flex_attention: compiling SDPA gives SDPA's own kernel back); decode shapes within "
        f"{DECODE_SLACK_US} µs of a torch copy of their own bytes in a CUDA graph, the floor of "
        "their traffic "
        "(do_bench against do_bench; CUDA-graph times beside). Where the reference must read "
        "its rows twice (issue 27 accepts the ceiling that puts on plain `tl`), ahead of torch "
        "eager, torch.compile and Liger-Kernel instead of a share of copy bandwidth.",
        "",
    ]
    if not found:
        return lines + ["No bench numbers.", ""]
    lines += ["| case | target | measured | met |", "|---|---|---|---|"]
    for t in found:
        met = {True: "met", False: "**not met**", None: "—"}[t["met"]]
        lines.append(f"| {t['case']} | {t['target']} | {t['measured']} | {met} |")
    counted = [t["met"] for t in found if t["met"] is not None]
    lines += ["", f"{sum(counted)} of {len(counted)} targets met."]
    return lines + [""]


if __name__ == "__main__":
    sys.exit(main())
