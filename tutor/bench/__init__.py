"""`tutor bench`: time a drill's kernels on the GPU, beside the reference, torch eager and compile.

    report = bench_drill(catalogue, "t3", "mine")
    print(format_report(report))
    record_best(store, report)

A kernel is timed only once the drill's tests pass (a wrong kernel's speed means nothing). The
timing runs in a child process (`python -m tutor.bench.child`) in its own process group with a
time limit, like the tests, so this module never imports torch: whether there is a GPU is found
out by the test run (its backend) or by the child. On the CPU nothing is timed and the report
says why: Triton's interpreter runs the program instances one after another in Python, so its
times say nothing about a GPU.

The child writes a bench record (tutor.bench.record: each case's sides and times, one name for
each); a BenchReport is that record read back, its rates derived, with how the bench was run.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tutor.bench.explain import coach_lines, facts_table
from tutor.bench.gpu_lock import LOCK_ENV, LOCK_FILE
from tutor.bench.occupancy import occupancy
from tutor.bench.record import SHOWN, BenchRecord, BenchRow, RecordError
from tutor.bench.rules import Side
from tutor.course import progress as p
from tutor.course.catalogue import Catalogue
from tutor.lang import cells, i18n
from tutor.lang.i18n import N_, _
from tutor.run.host import LOCAL
from tutor.run.runner import Runner
from tutor.run.supervisor import (
    CANCELLED,
    COULD_NOT_START,
    EXITED,
    TIMED_OUT,
    describe_exit,
)
from tutor.states import BackendName, BenchStatus

DEFAULT_TIMEOUT_S = 900.0  # torch.compile of every shape dominates: ~5-20 s a shape
CPU_BACKEND = BackendName.CPU  # RunResult.backend when the tests ran in the interpreter
OUTPUT_TAIL = 4000


CPU_EXPLANATION = N_(
    "No timing on the CPU: without a GPU the kernels run in Triton's interpreter, which executes "
    "the program instances one after another in Python. Its times say nothing about how the "
    "kernel would run on a GPU. Run `tutor bench {drill}` on a machine with an NVIDIA GPU."
)


@dataclass
class BenchReport(BenchRecord):
    """A bench as `tutor bench` ran it: the bench process's record (tutor.bench.record), and
    what it asked for, how the drill's tests ended first, how long it all took."""

    impl_name: str = ""  # as asked: mine, solutions or a path
    tests_status: str = ""  # how the drill's tests ended before timing ("" = not run)
    diagnoses: list[str] = field(default_factory=list)
    duration: float = 0.0
    output: str = ""  # the tail of the bench process's output, when it failed

    @property
    def timed(self) -> bool:
        return self.status == BenchStatus.TIMED

    def to_json(self) -> dict[str, Any]:
        """The record and the rest, plus per timed case what the coach derived: each side's
        fit on the card (programs per SM and their limit, resident warps, waves) and the perf
        diagnoses' ids."""
        data = super().to_json()
        data["timed"] = self.timed
        for row, raw in zip(self.rows, data["rows"], strict=True):
            raw["perf_diagnoses"] = [finding["id"] for finding in row.perf]
            raw["fits"] = fits(row, self.limits)
        return data


def fits(row: BenchRow, limits: dict[str, Any]) -> dict[str, Any]:
    """Each timed side's main launch on the card (tutor.bench.occupancy), as JSON."""
    found = {}
    for name, facts in row.facts.items():
        launches = [x for x in facts.get("launches", []) if "error" not in x]
        main = Side(name, launches=launches, kernels=list(facts.get("kernels", []))).main
        fit = occupancy(main, limits) if main and limits else None
        if fit is not None:
            found[name] = fit.to_json()
    return found


def bench_drill(
    catalogue: Catalogue,
    drill_id: str,
    impl: str = "mine",
    *,
    runner: Runner | None = None,
    force_cpu: bool = False,
    verify: bool = True,
    compile: bool = True,
    cases: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    python: str = sys.executable,
    warm=None,
    gpu: bool | None = None,
    host=None,
) -> BenchReport:
    """Check the drill's tests, then time its bench cases on the GPU in a child process.

    - `runner` runs the tests; its warm process (`warm`, when not given) also forks the bench
      process, so neither pays for importing torch (torch.compile keeps its fresh processes).
    - `verify=False` skips the tests (the caller has just run them).
    - `compile=False` skips torch.compile (its compiles take most of the time).
    - `cases`: case numbers (from 0) or function names; all when None.
    - `on_progress` gets each line the bench process prints, as it comes.
    - `cancel`: when set, the test run or the bench process is killed with its group.
    - `gpu`: whether the host has a GPU (None: ask it; NVML, tutor.run.gpu). Without one, or with
      `force_cpu`, the report says at once that timing needs a GPU, and runs nothing.
    - `host`: where the tests and the bench run (tutor.run.host); the runner's when not given.
    """
    started = time.monotonic()
    drill = catalogue.drill(drill_id)
    paths = catalogue.paths
    impl_path = paths.resolve_impl(drill.file, impl)
    report = BenchReport(
        drill=drill_id, impl=str(impl_path), status=BenchStatus.ERROR, impl_name=impl
    )
    if not drill.bench:
        report.status = BenchStatus.NO_CASES
        report.message = _("drills.yaml lists no bench shapes for {drill}").format(drill=drill_id)
        return report
    host = host or getattr(runner, "host", LOCAL)
    if force_cpu or not (host.has_gpu() if gpu is None else gpu):
        report.status = BenchStatus.NO_GPU
        report.message = _(CPU_EXPLANATION).format(drill=drill_id)
        if force_cpu:
            report.message += _(" (--cpu was given.)")
        return report
    ran_on_cpu = False
    if warm is None and runner is not None:
        warm = getattr(runner, "warm", None)
    if verify:
        runner = runner or Runner(catalogue, force_cpu=force_cpu, warm=warm, host=host)
        result = runner.run(drill_id, impl, cancel=cancel)
        report.tests_status, report.diagnoses = result.status, list(result.diagnoses)
        if not result.passed:
            report.status = BenchStatus.TESTS_FAIL
            first = f" ({result.diagnoses[0]})" if result.diagnoses else ""
            detail = f": {result.message}" if result.message else ""
            report.message = _(
                "not timed: tests fail{first}{detail}. Run `tutor check {drill}` to see what is "
                "wrong."
            ).format(first=first, detail=detail, drill=drill_id)
            report.duration = round(time.monotonic() - started, 2)
            return report
        ran_on_cpu = result.backend == CPU_BACKEND
    if ran_on_cpu:  # torch saw no GPU after all (a driver problem, CUDA_VISIBLE_DEVICES)
        report.status = BenchStatus.NO_GPU
        report.message = _("The tests pass on the CPU interpreter. ") + _(CPU_EXPLANATION).format(
            drill=drill_id
        )
        report.duration = round(time.monotonic() - started, 2)
        return report
    _run_child(
        report,
        catalogue,
        drill_id,
        impl_path,
        compile,
        cases,
        timeout,
        on_progress,
        python,
        cancel,
        warm,
        host,
    )
    report.duration = round(time.monotonic() - started, 2)
    return report


def _run_child(
    report: BenchReport,
    catalogue: Catalogue,
    drill_id: str,
    impl_path: Path,
    with_compile: bool,
    cases: list[str] | None,
    timeout: float,
    on_progress: Callable[[str], None] | None,
    python: str,
    cancel: threading.Event | None = None,
    warm=None,
    host=LOCAL,
) -> None:
    root = catalogue.paths.root
    with tempfile.TemporaryDirectory(prefix="tutor-bench-") as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            python,
            "-m",
            "tutor.bench.child",
            "--drill",
            drill_id,
            "--impl",
            str(impl_path),
            "--out",
            str(out),
            "--root",
            str(root),
        ]
        if not with_compile:
            cmd.append("--no-compile")
        if cases:
            cmd += ["--cases", ",".join(str(c) for c in cases)]
        env = dict(
            os.environ,
            PYTHONUNBUFFERED="1",
            PYTHONDONTWRITEBYTECODE="1",
            **catalogue.paths.kernel_cache_env(),
            **i18n.child_env(),  # the coach's findings, in the learner's language
        )
        env.pop("TRITON_INTERPRET", None)  # timings need the real GPU
        # one timed stretch on the card at a time, whatever else of the course benches
        env.setdefault(LOCK_ENV, str(catalogue.paths.state_dir / LOCK_FILE))
        package_parent = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(
            [package_parent] + [x for x in env.get("PYTHONPATH", "").split(os.pathsep) if x]
        )
        returncode, ended, output = _run_group(
            cmd, root, env, timeout, on_progress, cancel, warm, host, returns=[out]
        )
        data = _read(out)
    if data:
        try:
            merge(report, data)
        except RecordError as exc:  # a bench process of another version of the tutor
            report.status, report.message = BenchStatus.ERROR, f"{out.name}: {exc}"
            report.output = output[-OUTPUT_TAIL:]
            return
    if report.status == BenchStatus.NO_GPU:
        report.message = _(CPU_EXPLANATION).format(drill=drill_id) + f" ({report.message}.)"
        return
    complete = report.status == BenchStatus.TIMED
    if ended == TIMED_OUT and complete:
        report.notes.append(
            _(
                "the bench process finished its report but did not exit; it was stopped after "
                "{seconds} s"
            ).format(seconds=f"{timeout:.0f}")
        )
    elif ended == CANCELLED:
        report.status = BenchStatus.ERROR
        report.message = _("the bench was cancelled; the cases measured before that are shown")
    elif ended == TIMED_OUT:
        report.status = BenchStatus.ERROR
        report.message = _(
            "the bench was stopped after {seconds} s; the cases measured before that are shown"
        ).format(seconds=f"{timeout:.0f}")
    elif not complete:
        report.status = BenchStatus.ERROR
        report.message = report.message or _(
            "the bench process ended ({how}) without a report"
        ).format(how=describe_exit(returncode))
    if report.status != BenchStatus.TIMED:
        report.output = output[-OUTPUT_TAIL:]


def _run_group(
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    on_progress: Callable[[str], None] | None,
    cancel: threading.Event | None = None,
    warm=None,
    host=LOCAL,
    returns: list[Path] | None = None,
) -> tuple[int, str, str]:
    """Run the bench child under the supervisor on `host`, passing each line it prints to
    `on_progress`; `returns`: the files it writes that are read once it ended."""
    lines: list[str] = []
    partial = [b""]

    def output(chunk: bytes) -> None:
        *done, partial[0] = (partial[0] + chunk).split(b"\n")
        for raw in done:
            line = raw.decode("utf-8", "replace")
            lines.append(line + "\n")
            if on_progress is not None:
                on_progress(line)

    ended = host.supervise(
        cmd,
        cwd=cwd,
        env=env,
        timeout=timeout,
        cancel=cancel,
        on_output=output,
        warm=warm,
        returns=returns or [],
    )
    if partial[0]:
        output(b"\n")
    if ended.how == COULD_NOT_START:
        return ended.returncode, EXITED, ended.error
    return ended.returncode, ended.how, "".join(lines)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def merge(report: BenchReport, data: dict[str, Any]) -> None:
    """Fill `report` from the bench process's JSON (a BenchRecord's, its rates derived): what
    it measured, and the perf coach's verdicts (tests rebuild reports from recorded JSON too).
    Raises RecordError for JSON that is no record this tutor reads."""
    record = BenchRecord.from_json(data)
    for name in (f.name for f in fields(BenchRecord)):
        if name not in ("drill", "impl"):
            setattr(report, name, getattr(record, name))


# ---- text for the command line ------------------------------------------------------------------

LEGEND = (
    N_("µs: do_bench median, the L2 flushed before each call. ref: the reference solution."),
    N_("GB/s: the fewest bytes the op must move (each input read once, each output written once)."),
    N_(
        "graph: GPU time per call replayed in a CUDA graph, for decode-sized shapes (launch-bound)."
    ),
)
COPY_LEGEND = N_(
    "copy: a torch copy of the same bytes in a CUDA graph, beside decode-sized shapes: the least "
    "any kernel that moves them takes."
)
COMPILED_AS_LEGEND = N_(
    "compile: torch.compile's {name}, the kernel it writes for this op (compiled, torch eager's "
    "own would run its library kernel again)."
)
_COLUMNS = (
    ("yours µs", 9),
    ("GB/s", 6),
    ("%copy", 6),
    ("ref µs", 9),
    ("eager µs", 9),
    ("compile µs", 11),
    ("graph µs", 9),
    ("copy µs", 9),
)


# Columns dropped, in this order, when the table is wider than the text may be.
_DROPPED_FIRST = ("GB/s", "eager µs", "compile µs", "ref µs")


def format_report(report: BenchReport, width: int = 100) -> str:
    """What `tutor bench` prints: a table within `width` columns (columns that hold nothing
    are left out, then the least needed), the coach, notes and a legend."""
    where = _short_path(report.impl)
    lines = [
        _("{drill}: {file} on {device}").format(
            drill=report.drill, file=where, device=report.device
        )
        if report.device
        else f"{report.drill}: {where}"
    ]
    if (
        report.status in (BenchStatus.TESTS_FAIL, BenchStatus.NO_GPU, BenchStatus.NO_CASES)
        or not report.rows
    ):
        lines += cells.wrap(
            report.message or _("not timed ({status})").format(status=report.status), width
        )
        if report.output:
            lines += ["", _("bench output (last lines):")]
            lines += [f"  {line}" for line in report.output.strip().splitlines()[-15:]]
        return "\n".join(lines)
    anchors = []
    if report.copy_gbps:
        anchors.append(_("copy bandwidth {gbps} GB/s").format(gbps=f"{report.copy_gbps:.0f}"))
    if report.launch_us:
        graph = (
            _(" ({us} µs in a CUDA graph)").format(us=f"{report.launch_graph_us:.1f}")
            if report.launch_graph_us
            else ""
        )
        anchors.append(
            _("empty Triton launch {us} µs{graph}").format(
                us=f"{report.launch_us:.1f}", graph=graph
            )
        )
    if report.matmul_tflops and any(row.flops for row in report.rows):
        anchors.append(
            _("bf16 matmul {tflops} TFLOP/s").format(tflops=f"{report.matmul_tflops:.0f}")
        )
    if anchors:
        lines += cells.wrap(" · ".join(anchors), width)
    lines += ["", *_table(report, width)]
    coached = [row for row in report.rows if row.perf_verdict]
    if coached:
        lines += [""] + cells.wrap(
            _("Perf coach (your kernel against the reference; GPU time in a CUDA graph):"), width
        )
        for row in coached:
            lines += [""] + [
                wrapped for line in coach_lines(row) for wrapped in _hanging(line, width)
            ]
            lines += facts_table(row, report.limits)
    notes = list(report.notes)
    for row in report.rows:
        notes += [f"{row.short_label}: {_shown(name)}: {text}" for name, text in row.errors.items()]
        notes += [f"{row.short_label}: {text}" for text in row.notes]
    if report.message:
        notes.insert(0, report.message)
    if notes:
        lines.append("")
    for note in notes:
        wrapped = cells.wrap(note, width, indent="  ")
        lines += ["! " + wrapped[0][2:], *wrapped[1:]] if wrapped else []
    texts = [_(text) for text in LEGEND]
    if any(row.times.copy_floor.graph_us for row in report.rows):
        texts.append(_(COPY_LEGEND))
    compiled_as = {
        row.compiled_as for row in report.rows if row.compiled_as and row.times.compile.timed
    }
    texts += [_(COMPILED_AS_LEGEND).format(name=name) for name in sorted(compiled_as)]
    legend = [wrapped for text in texts for wrapped in cells.wrap(text, width)]
    return "\n".join(lines + ["", *legend])


def _hanging(line: str, width: int) -> list[str]:
    """`line` wrapped by terminal cells, its second and later lines indented by four."""
    lead = len(line) - len(line.lstrip(" "))
    first, *rest = cells.wrap(line, width, indent=" " * lead) or [""]
    return [first, *cells.wrap(" ".join(r.strip() for r in rest), width, indent="    ")]


def _table(report: BenchReport, width: int) -> list[str]:
    dtypes = {row.dtype for row in report.rows}
    same_dtype = len(dtypes) == 1
    labels = [
        row.short_label if same_dtype else f"{row.short_label} {row.dtype}" for row in report.rows
    ]
    label_width = max(24, min(36, max(len(label) for label in labels) + 1))
    head = f"{('case (' + next(iter(dtypes)) + ')') if same_dtype else 'case':<{label_width}}"
    cells = [
        (
            _us(row.times.mine.per_call_us),
            _num(row.rates.gbps),
            _pct(row.rates.pct_copy),
            _us(row.times.reference.per_call_us),
            _us(row.times.eager.per_call_us),
            _us(row.times.compile.per_call_us),
            _us(row.times.mine.graph_us),
            _us(row.times.copy_floor.graph_us),
        )
        for row in report.rows
    ]
    shown = [n for n, (name, _) in enumerate(_COLUMNS) if any(row[n] != "—" for row in cells)] or [
        0
    ]
    for name in _DROPPED_FIRST:
        if label_width + sum(_COLUMNS[n][1] for n in shown) <= width:
            break
        shown = [n for n in shown if _COLUMNS[n][0] != name]
    lines = [head + "".join(f"{_COLUMNS[n][0]:>{_COLUMNS[n][1]}}" for n in shown)]
    for label, row in zip(labels, cells, strict=True):
        lines.append(
            f"{label[: label_width - 1]:<{label_width}}"
            + "".join(f"{row[n]:>{_COLUMNS[n][1]}}" for n in shown)
        )
    return lines


def _shown(name: str) -> str:
    """`mine (graph)` -> `your kernel (graph)`."""
    role, _, rest = name.partition(" ")
    return f"{SHOWN.get(role, role)} {rest}".strip()


def _short_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def _us(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}%"


# ---- progress -----------------------------------------------------------------------------------


def record_best(store: p.ProgressStore, report: BenchReport) -> list[str]:
    """Keep, per case, the learner's fastest time in DrillProgress.best_bench; save if changed.

    Returns the labels of the cases that improved. Call it for the learner's own file only.
    """
    improved = []
    with store.update():
        state = store.drill(report.drill)
        for row in report.rows:
            us, rates = row.times.mine.per_call_us, row.rates
            if us is None:
                continue
            best_us = (state.best_bench.get(row.label) or {}).get("us")
            if isinstance(best_us, (int, float)) and best_us <= us:
                continue
            state.best_bench[row.label] = {  # the progress file's own names (course.progress)
                "us": round(us, 3),
                "gbps": None if rates.gbps is None else round(rates.gbps, 1),
                "pct_copy": None if rates.pct_copy is None else round(rates.pct_copy, 1),
                "device": report.device,
                "at": p.now(),
            }
            improved.append(row.label)
    return improved
