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
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tutor.bench.explain import coach_lines, facts_table
from tutor.bench.gpu_lock import LOCK_ENV, LOCK_FILE
from tutor.bench.occupancy import occupancy
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
class BenchRow:
    """One bench case. Times are microseconds (do_bench median, L2 flushed); None = not timed."""

    label: str
    function: str = ""
    shape: dict[str, int] = field(default_factory=dict)
    dtype: str = ""
    bytes: int = 0  # the fewest bytes read + written (the drill's bench recipe)
    decode: bool = False  # a few rows: the time is mostly launch overhead
    large: bool = False  # enough traffic that the target is a share of copy bandwidth
    rereads: bool = False  # the reference must read the rows twice (recipe.Recipe.rereads)
    compiled_as: str = ""  # what torch.compile's column ran, if not eager compiled (m3: flex)
    flops: float | None = None  # floating-point operations of one call (compute-bound drills)
    tflops: float | None = None  # flops / the learner's time
    pct_matmul: float | None = None  # tflops as a percentage of the card's bf16 matmul rate
    target: float | None = None  # the recipe's target (% of copy, or share of eager's speed)
    graph_gbps: float | None = None  # bytes / GPU time per call in a CUDA graph
    graph_pct_copy: float | None = None
    impl_us: float | None = None
    gbps: float | None = None
    pct_copy: float | None = None  # GB/s as a percentage of the card's copy bandwidth
    reference_us: float | None = None
    eager_us: float | None = None
    compile_us: float | None = None
    graph_us: float | None = None  # the learner's kernel: GPU time per call in a CUDA graph
    reference_graph_us: float | None = None
    eager_graph_us: float | None = None
    compile_graph_us: float | None = None
    # The reference solution in torch.compile's own process, its graph timed in turn with
    # compile's: the two compared at one clock (tutor.bench.isolated).
    reference_beside_compile_us: float | None = None
    # Decode shapes: a torch copy of the same bytes in a graph, timed in turn with the rest, the
    # floor of their traffic (launch and one trip to DRAM; tutor.bench.child._copy_of).
    copy_floor_graph_us: float | None = None
    compile_s: float | None = None  # how long torch.compile took for this shape
    max_diff: dict[str, float | None] = field(default_factory=dict)  # against torch eager
    errors: dict[str, str] = field(default_factory=dict)  # implementation -> what went wrong
    notes: list[str] = field(default_factory=list)
    # The perf coach (tutor.bench.coach): each implementation's launches and GPU kernels, the
    # yardstick the learner's kernel is judged against, and the perf diagnoses, first first.
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    yardstick: str | None = None
    perf_ratio: float | None = None  # the learner's GPU time over the yardstick's
    perf: list[dict[str, Any]] = field(default_factory=list)  # {"id", "text", "numbers"}
    perf_verdict: str | None = None  # the first perf diagnosis, or "at-reference"

    @property
    def short_label(self) -> str:
        """`softmax m=4096 n=1000`: the label without the dtype."""
        dims = " ".join(f"{k}={v}" for k, v in self.shape.items())
        return f"{self.function} {dims}".strip() or self.label


@dataclass
class BenchReport:
    drill: str
    impl: str  # the file timed
    status: str
    message: str = ""
    impl_name: str = ""  # as asked: mine, solutions or a path
    device: str = ""
    torch: str = ""
    triton: str = ""
    python: str = ""
    copy_gbps: float | None = None  # device-to-device copy, bytes read + written
    launch_us: float | None = None  # an empty Triton kernel, do_bench median
    launch_graph_us: float | None = None  # the same in a CUDA graph
    matmul_tflops: float | None = None  # dense bf16 matmul through torch (cuBLAS), 8192^3
    l2_flush: bool | None = None
    limits: dict[str, Any] = field(default_factory=dict)  # the card (tutor.bench.facts)
    rows: list[BenchRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tests_status: str = ""  # how the drill's tests ended before timing ("" = not run)
    diagnoses: list[str] = field(default_factory=list)
    duration: float = 0.0
    output: str = ""  # the tail of the bench process's output, when it failed

    @property
    def timed(self) -> bool:
        return self.status == BenchStatus.TIMED

    def to_json(self) -> dict[str, Any]:
        """Everything, plus per timed case what the coach derived: each side's fit on the card
        (programs per SM and their limit, resident warps, waves) and the perf diagnoses' ids."""
        data = asdict(self)
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
        merge(report, data)
    if data.get("status") == BenchStatus.NO_GPU:
        report.status = BenchStatus.NO_GPU
        report.message = _(CPU_EXPLANATION).format(drill=drill_id) + f" ({data.get('message')}.)"
        return
    complete = data.get("status") == BenchStatus.TIMED
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
        report.message = data.get("message") or _(
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
    """Fill `report` from the bench process's JSON (tutor.bench.child's layout): what it
    measured, and the perf coach's verdicts (tests rebuild reports from recorded JSON too)."""
    for key in (
        "device",
        "torch",
        "triton",
        "python",
        "copy_gbps",
        "launch_us",
        "launch_graph_us",
        "matmul_tflops",
        "l2_flush",
        "limits",
    ):
        if data.get(key) is not None:
            setattr(report, key, data[key])
    report.status = data.get("status", BenchStatus.ERROR)
    report.message = data.get("message") or ""
    report.notes = list(data.get("notes", []))
    report.rows = [row_from_child(raw, report.copy_gbps) for raw in data.get("rows", [])]
    if report.matmul_tflops:
        for row in report.rows:
            if row.tflops:
                row.pct_matmul = 100.0 * row.tflops / report.matmul_tflops


def row_from_child(raw: dict[str, Any], copy_gbps: float | None) -> BenchRow:
    """A BenchRow from one of the child's rows, with GB/s and the share of copy bandwidth."""
    us, graph = raw.get("us", {}), raw.get("graph_us", {})
    row = BenchRow(
        label=raw.get("label", "?"),
        function=raw.get("function", ""),
        shape=dict(raw.get("shape", {})),
        dtype=raw.get("dtype", ""),
        bytes=int(raw.get("bytes", 0)),
        decode=bool(raw.get("decode")),
        large=bool(raw.get("large")),
        rereads=bool(raw.get("rereads")),
        compiled_as=str(raw.get("compiled_as") or ""),
        impl_us=us.get("mine"),
        reference_us=us.get("reference"),
        eager_us=us.get("eager"),
        compile_us=us.get("compile"),
        graph_us=graph.get("mine"),
        reference_graph_us=graph.get("reference"),
        eager_graph_us=graph.get("eager"),
        compile_graph_us=graph.get("compile"),
        reference_beside_compile_us=raw.get("reference_beside_compile_us"),
        copy_floor_graph_us=raw.get("copy_floor_graph_us"),
        compile_s=raw.get("compile_s"),
        max_diff=dict(raw.get("max_diff", {})),
        errors=dict(raw.get("errors", {})),
        notes=list(raw.get("notes", [])),
        facts=dict(raw.get("facts", {})),
        yardstick=raw.get("yardstick"),
        perf_ratio=raw.get("perf_ratio"),
        perf=list(raw.get("perf", [])),
        perf_verdict=raw.get("perf_verdict"),
    )
    row.flops = raw.get("flops")
    row.target = raw.get("target")
    if row.graph_us and row.bytes:
        row.graph_gbps = row.bytes / (row.graph_us * 1e-6) / 1e9
        if copy_gbps:
            row.graph_pct_copy = 100.0 * row.graph_gbps / copy_gbps
    if row.impl_us and row.flops:
        row.tflops = row.flops / (row.impl_us * 1e-6) / 1e12
    if row.impl_us and row.bytes:
        row.gbps = row.bytes / (row.impl_us * 1e-6) / 1e9
        if copy_gbps:
            row.pct_copy = 100.0 * row.gbps / copy_gbps
    return row


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
    if any(row.copy_floor_graph_us for row in report.rows):
        texts.append(_(COPY_LEGEND))
    compiled_as = {row.compiled_as for row in report.rows if row.compiled_as and row.compile_us}
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
            _us(row.impl_us),
            _num(row.gbps),
            _pct(row.pct_copy),
            _us(row.reference_us),
            _us(row.eager_us),
            _us(row.compile_us),
            _us(row.graph_us),
            _us(row.copy_floor_graph_us),
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
    shown = {
        "mine": "your kernel",
        "reference": "the reference",
        "eager": "torch eager",
        "compile": "torch.compile",
    }.get(role, role)
    return f"{shown} {rest}".strip()


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
            if row.impl_us is None:
                continue
            best_us = (state.best_bench.get(row.label) or {}).get("us")
            if isinstance(best_us, (int, float)) and best_us <= row.impl_us:
                continue
            state.best_bench[row.label] = {
                "us": round(row.impl_us, 3),
                "gbps": None if row.gbps is None else round(row.gbps, 1),
                "pct_copy": None if row.pct_copy is None else round(row.pct_copy, 1),
                "device": report.device,
                "at": p.now(),
            }
            improved.append(row.label)
    return improved
