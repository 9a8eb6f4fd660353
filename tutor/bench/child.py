"""The process that times a drill's kernels on the GPU; `tutor.bench` starts it and reads its JSON.

    python -m tutor.bench.child --drill t3 --impl PATH --out report.json [--cases 0,rms_norm]
        [--root DIR] [--no-compile] [--remeasure]

For each bench case of the drill (drills.yaml) it times, with `triton.testing.do_bench` (median;
do_bench zeroes a 256 MB buffer before every timed call, so the L2 holds none of the inputs):
the file under test, the reference solution and torch eager in this process, and torch.compile
in a fresh process per shape (tutor.bench.isolated: compiled once, `dynamic=False`; in a shared
process, recompiles switch torch to dynamic shapes and its kernels get slower). Every
case also reports GPU time per call from CUDA-graph replay, where the CPU's launch cost is gone
(the number to read for small shapes), with inputs rotated over enough copies to exceed twice
the L2.

Two anchors are measured once per card and kept in `.tutor/bandwidth.json`: a 2 GiB
device-to-device copy (bytes read plus written: the practical ceiling for GB/s) and the launch
of an empty Triton kernel (the floor for any kernel's time).

It writes a bench record (tutor.bench.record), rewritten after every case, so a crash keeps
what was measured. Nothing here runs without a GPU: on the CPU it writes a record whose status is
`no-gpu` and exits.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tutor.bench.gpu_lock import LOCK_ENV
from tutor.bench.record import (
    COMPILE,
    COPY_FLOOR,
    EAGER,
    MINE,
    REFERENCE,
    SHOWN,
    SIBLING,
    BenchRecord,
    BenchRow,
    SideTimes,
)
from tutor.bench.timing import (
    _copy_gbps,
    _cuda_healthy,
    _do_bench_flushes,
    _empty_launch_us,
    _matmul_tflops,
    graph_input_sets,
    graphs_us,
    l2_bytes,
    median_ms,
)
from tutor.course.files import read_regular
from tutor.lang import i18n
from tutor.states import BenchStatus

IMPLS = (MINE, REFERENCE, EAGER)  # timed in this process, in this order, per case
FACTS_OF = (MINE, REFERENCE, EAGER)  # whose launches and kernels the perf coach reads
ISOLATED_TIMEOUT_S = 300.0  # one torch.compile of one shape, in its own process
ANCHOR_SCHEMA = 2  # 2: the bf16 matmul rate joined the copy bandwidth and the empty launch
ANCHORS = ("copy_gbps", "launch_us", "launch_graph_us", "matmul_tflops")
DEVICE = "cuda"


def log(message: str) -> None:
    print(f"[bench] {message}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutor.bench.child", description=__doc__)
    parser.add_argument("--drill", required=True)
    parser.add_argument("--impl", required=True, help="the file to time")
    parser.add_argument("--out", required=True, help="where to write the JSON report")
    parser.add_argument("--root", default=None, help="the course folder (holds drills.yaml)")
    parser.add_argument(
        "--cases", default=None, help="comma-separated case numbers (from 0) or function names"
    )
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument(
        "--remeasure", action="store_true", help="measure the copy and launch anchors again"
    )
    args = parser.parse_args(argv)
    i18n.activate_from_env()  # the tutor passes the learner's language in $TUTOR_LANG
    if argv is None:  # run as the bench process: end with the tutor, take our leftovers along
        from tutor.run.child_guard import install

        install(None)
    record = BenchRecord(
        drill=args.drill, impl=str(Path(args.impl).resolve()), status=BenchStatus.RUNNING
    )
    out = Path(args.out)
    try:
        _run(args, record, out)
    except Exception as exc:  # noqa: BLE001 - whatever breaks is reported in the JSON
        record.status = BenchStatus.ERROR
        record.message = f"{type(exc).__name__}: {exc}"
        record.traceback = traceback.format_exc()[-4000:]
        log(f"failed: {record.message}")
    finally:
        _write(out, record.to_json())
    return 0 if record.status in (BenchStatus.TIMED, BenchStatus.NO_GPU) else 1


def _run(args: argparse.Namespace, record: BenchRecord, out: Path) -> None:
    shared = _shared_gpu()  # before this process holds the GPU itself
    if shared:
        log(shared)
        record.notes.append(shared)
    import torch

    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
        record.status = BenchStatus.NO_GPU
        record.message = "torch sees no GPU" + (
            " (TRITON_INTERPRET=1 is set)" if os.environ.get("TRITON_INTERPRET") == "1" else ""
        )
        return

    from tutor import kernels
    from tutor.course.catalogue import load_catalogue
    from tutor.course.paths import CoursePaths, find_root

    paths = CoursePaths(find_root(args.root))
    drill = load_catalogue(paths).drill(args.drill)
    language = kernels.use(drill.language)
    # The GPU, as a test run would choose it: a language that builds for it (CUDA C++) must know.
    language.select_backend(False, lambda: None)
    _device_info(record, language)
    from tutor.bench.facts import device_limits

    record.limits = device_limits()
    record.l2_flush = _do_bench_flushes()
    if not record.l2_flush:
        record.notes.append(
            "this triton's do_bench does not seem to flush the L2 between "
            "calls: small shapes may look faster than they are"
        )
    with torch.no_grad():
        anchors = _anchors(paths.state_dir / "bandwidth.json", record, args.remeasure)
        for name, value in anchors.items():
            setattr(record, name, value)
        _write(out, record.to_json())
        bench_cases(
            record,
            out,
            drill,
            _select(drill.bench, args.cases),
            Path(args.impl),
            paths.solution(drill.file),
            paths.bench_recipe(drill.id),
            with_compile=not args.no_compile,
            host=paths.host(drill.file),
        )


def _shared_gpu() -> str:
    """What other processes hold the GPU, said before any timing ("" when none): their kernels
    share its time with the ones timed here (the tutor's own are not counted: tutor.run.gpu)."""
    from tutor.run.gpu import other_processes

    others = other_processes()
    if not others:
        return ""
    held = sum(process.used_bytes for process in others) / 2**30
    pids = ", ".join(str(process.pid) for process in others if process.pid) or "in other containers"
    return (
        f"the GPU is shared: {len(others)} other process(es) ({pids}) hold {held:.1f} GiB on it; "
        "the times below are slower, and vary, while they run"
    )


def _device_info(record: BenchRecord, language: Any) -> None:
    import torch

    record.device = torch.cuda.get_device_name(0)
    record.torch = torch.__version__
    record.versions = language.versions()  # {"triton": "3.6.0"}
    record.python = platform.python_version()
    record.l2_bytes = l2_bytes()


def bench_cases(
    record: BenchRecord,
    out: Path,
    drill: Any,
    cases: list,
    impl_path: Path,
    ref_path: Path,
    recipe_path: Path,
    *,
    with_compile: bool = True,
    host: Path | None = None,
) -> None:
    """Time every case, rewriting `out` after each; set the record's status and message."""
    import torch

    from tutor.bench.recipe import RecipeError, load_recipes

    try:
        recipes = load_recipes(recipe_path)
    except RecipeError as exc:
        record.status, record.message = BenchStatus.ERROR, str(exc)
        return

    versions = ", ".join(f"{name} {version}" for name, version in record.versions.items())
    log(
        f"{drill.id} on {record.device} (torch {record.torch}"
        f"{', ' + versions if versions else ''}); {len(cases)} case(s)"
    )
    torch.manual_seed(0)
    impl_path, ref_path = impl_path.resolve(), ref_path.resolve()
    notes = record.notes
    modules = {MINE: load_module(impl_path, drill.functions, notes, MINE, host)}
    if ref_path == impl_path:
        notes.append("the file timed is the reference solution: timed once")
        record.reference_is_impl = True
        modules[REFERENCE] = None
    elif ref_path.is_file():
        modules[REFERENCE] = load_module(ref_path, drill.functions, notes, REFERENCE, host)
    else:
        notes.append(f"no reference solution at {ref_path}")
        modules[REFERENCE] = None
    beside = ref_path if ref_path.is_file() else None
    siblings = {name: ref_path.parent / r.sibling for name, r in recipes.items() if r.sibling}
    compiles = _CompileColumn(
        cases if with_compile else [], recipe_path, beside, drill.language, host, siblings
    )
    try:
        for number, case in enumerate(cases):
            log(f"case {number + 1}/{len(cases)}: {case.label}")
            try:
                if case.function not in recipes:
                    raise ValueError(f"{recipe_path.name} has no recipe for {case.function}")
                record.rows.append(
                    _bench_case(case, recipes[case.function], modules, record, compiles)
                )
            except Exception as exc:  # noqa: BLE001 - e.g. out of memory making the inputs
                notes.append(f"{case.label}: not timed: {short_error(exc)}")
                log(f"  not timed: {short_error(exc)}")
            _write(out, record.to_json())
            if not _cuda_healthy():
                notes.append("the GPU reported an error; later cases were skipped")
                break
    finally:
        compiles.close()
    _read_facts(record, cases, recipes, modules)
    from tutor.bench.coach import coach_rows

    coach_rows(record, {name: recipe.levers for name, recipe in recipes.items()})
    _write(out, record.to_json())
    if any(row.times.mine.timed for row in record.rows):
        record.status = BenchStatus.TIMED
    else:
        record.status = BenchStatus.ERROR
        errors = [row.errors[MINE] for row in record.rows if MINE in row.errors]
        record.message = "your file could not be timed: " + (
            errors[0] if errors else "; ".join(notes) or "no bench case ran"
        )


def _read_facts(record: BenchRecord, cases: list, recipes: dict, modules: dict) -> None:
    """Each timed implementation's launch facts and profiled kernels, case by case.

    Read after every case is timed: the profiler (CUPTI) stays hooked into the process once
    used, and the launches timed after it would pay for that.
    """
    import torch

    from tutor import kernels
    from tutor.bench.facts import call_facts
    from tutor.bench.recipe import clone_inputs

    rows = {row.label: row for row in record.rows}
    for case in cases:
        row, op = rows.get(case.label), recipes.get(case.function)
        if row is None or op is None or not _cuda_healthy():
            continue
        try:
            base = op.inputs(case.shape, case.dtype, DEVICE)
            fns = _implementations(op, modules, case.function, {})
            for name in FACTS_OF:
                if not row.times.of(name).timed or name not in fns:
                    continue
                # Inputs made beforehand: the profiler would count their copies as the call's.
                pair = [clone_inputs(base) for _ in range(2)]
                turn = iter(range(2))
                row.facts[name] = call_facts(
                    lambda f=fns[name], pair=pair, turn=turn: f(*pair[next(turn) % 2]),
                    kernels.current(),
                )
            if record.reference_is_impl and MINE in row.facts:
                row.facts[REFERENCE] = row.facts[MINE]
            del base
            torch.cuda.empty_cache()
        except Exception as exc:  # noqa: BLE001 - facts are evidence; the times stand
            row.notes.append(f"launch facts not read: {short_error(exc)}")


def _select(cases: tuple, wanted: str | None) -> list:
    if not wanted:
        return list(cases)
    chosen = []
    for item in (w.strip() for w in wanted.split(",") if w.strip()):
        if item.isdigit() and int(item) < len(cases):
            chosen.append(cases[int(item)])
        else:
            chosen.extend(c for c in cases if c.function == item)
    return [c for i, c in enumerate(chosen) if c not in chosen[:i]]


def load_module(
    path: Path,
    functions: tuple[str, ...],
    notes: list[str],
    role: str,
    host: Path | None = None,
) -> Any:
    """Load a learner or solution file in the drill's kernel language (tutor.kernels.current)
    as its own module, with the drill's host code where its language has one; None (and a
    line in `notes`) if it cannot."""
    from tutor import kernels
    from tutor.kernels.base import KernelFailure

    language = kernels.current()
    try:
        module = language.load(path, f"bench_{role}_{abs(hash(str(path)))}", host)
    except KernelFailure as failure:
        notes.append(f"{role}: could not load {path.name}: {failure.message}")
        return None
    missing = [f for f in functions if not callable(getattr(module, f, None))]
    if missing:
        notes.append(f"{role}: {path.name} does not define {', '.join(missing)}")
    return module


# ---- anchors: copy bandwidth and an empty launch, once per card ---------------------------------


def _anchors(cache_file: Path, record: BenchRecord, remeasure: bool) -> dict[str, Any]:
    """The cached anchors for this card and software, else measured now and cached."""
    import torch

    cached = _read_json(cache_file)
    devices = cached.get("devices", {}) if cached.get("schema") == ANCHOR_SCHEMA else {}
    entry = devices.get(record.device)
    software = {"torch": record.torch, **record.versions}
    same = bool(entry) and all(entry.get(k) == v for k, v in software.items())
    if same and not remeasure and entry.get("copy_gbps") and entry.get("launch_us"):
        log(
            f"anchors from {cache_file}: copy {entry['copy_gbps']:.0f} GB/s, "
            f"empty launch {entry['launch_us']:.2f} µs"
        )
        return {k: entry.get(k) for k in ANCHORS}
    found: dict[str, Any] = dict.fromkeys(ANCHORS)
    try:
        found["copy_gbps"] = _copy_gbps()
    except Exception as exc:  # noqa: BLE001
        record.notes.append(f"copy bandwidth not measured: {type(exc).__name__}: {exc}")
    torch.cuda.empty_cache()  # give back the 4 GiB of the copy
    try:
        found["launch_us"], found["launch_graph_us"] = _empty_launch_us()
    except Exception as exc:  # noqa: BLE001
        record.notes.append(f"empty launch not measured: {type(exc).__name__}: {exc}")
    try:
        found["matmul_tflops"] = _matmul_tflops()
    except Exception as exc:  # noqa: BLE001 - the M track's rate is shown without it
        record.notes.append(f"matmul rate not measured: {type(exc).__name__}: {exc}")
    torch.cuda.empty_cache()
    log(
        f"anchors measured: copy {_fmt(found['copy_gbps'])} GB/s, empty launch "
        f"{_fmt(found['launch_us'], 2)} µs (graph {_fmt(found['launch_graph_us'], 2)} µs)"
    )
    if found["copy_gbps"] and found["launch_us"]:
        devices[record.device] = {
            **found,
            **software,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        try:
            _write(cache_file, {"schema": ANCHOR_SCHEMA, "devices": devices})
        except OSError as exc:
            record.notes.append(f"could not cache the anchors in {cache_file}: {exc}")
    return found


def _bench_case(
    case: Any,
    op: Any,
    modules: dict[str, Any],
    record: BenchRecord,
    compiles: _CompileColumn,
) -> BenchRow:
    import torch

    from tutor.bench.recipe import clone_inputs

    row = BenchRow(
        label=case.label,
        function=case.function,
        shape=dict(case.shape),
        dtype=case.dtype,
        bytes=op.bytes_moved(case.shape, case.dtype),
        flops=op.flop_count(case.shape),
        target=op.target,
        decode=op.is_decode(case.shape),
        large=op.is_large(case.shape, case.dtype),
        rereads=op.reads_twice(case.shape),
        compiled_as=op.compiled_as,
        sibling_as=op.sibling,
    )
    base = op.inputs(case.shape, case.dtype, DEVICE)
    fns = _implementations(op, modules, case.function, row.errors)
    expected = None
    try:
        fresh = clone_inputs(base)
        expected = op.results(fresh, op.eager(*fresh))
    except Exception as exc:  # noqa: BLE001
        row.errors[EAGER] = short_error(exc)
    for name in IMPLS:
        fn = fns.get(name)
        if fn is None:
            continue
        try:
            _time_one(name, fn, op, base, expected, row)
        except Exception as exc:  # noqa: BLE001 - one implementation failing spoils no other
            row.errors[name] = short_error(exc)
            log(f"  {name}: {row.errors[name]}")
            if not _cuda_healthy():
                break
    if _cuda_healthy():
        # GPU time per call for every shape: do_bench also counts the host's launch cost,
        # which on a busy host (or a wrapper that does work in Python) is most of a small
        # kernel's time and changes from run to run.
        _graph_times(op, fns, base, row, record.l2_bytes or 0)
    if compiles.wanted(case) and _cuda_healthy():
        log("  compile   (in a fresh process: one compile of this shape, dynamic=False)")
        _compile_times(row, compiles.result(case))
    if record.reference_is_impl:
        row.times.reference = SideTimes(row.times.mine.per_call_us, row.times.mine.graph_us)
    del base, expected
    torch.cuda.empty_cache()
    return row


def _compile_times(row: BenchRow, compiled: dict[str, Any]) -> None:
    """torch.compile's times from its own process (tutor.bench.isolated), and the reference's
    graph timed in turn with compile's there."""
    if compiled.get("per_call_us") is None:
        row.errors[COMPILE] = compiled.get("error") or "no time"
        return
    row.times.compile = SideTimes(compiled["per_call_us"], compiled.get("graph_us"))
    row.compile_s = compiled.get("compile_s")
    row.max_diff[COMPILE] = compiled.get("max_diff")
    if compiled.get("beside_graph_us") is not None:
        row.times.reference_beside_compile.graph_us = compiled["beside_graph_us"]
        log(f"  reference {compiled['beside_graph_us']:9.2f} µs in turn with compile there")
    elif compiled.get("beside_error"):
        row.errors["reference (beside compile)"] = compiled["beside_error"]
    if compiled.get("sibling_graph_us") is not None:
        row.times.sibling.graph_us = compiled["sibling_graph_us"]
        log(f"  {row.sibling_as} {compiled['sibling_graph_us']:9.2f} µs in turn there")
    elif compiled.get("sibling_error"):
        row.errors[SIBLING] = compiled["sibling_error"]
    log(f"  compile   {compiled['per_call_us']:9.2f} µs")


def _implementations(
    op: Any, modules: dict[str, Any], function: str, errors: dict[str, str]
) -> dict[str, Callable[..., Any]]:
    """The callables to time: torch eager, and each loaded file's `function` (or, in
    `errors`, that it defines none)."""
    fns: dict[str, Callable[..., Any]] = {EAGER: op.eager}
    for role in (MINE, REFERENCE):
        module = modules.get(role)
        fn = getattr(module, function, None) if module is not None else None
        if callable(fn):
            fns[role] = fn
        elif module is not None:
            errors[role] = f"defines no {function}"
    return fns


class _CompileColumn:
    """torch.compile's column of each case, timed in a fresh process of its own (isolated).

    With the card's timing lock named (tutor.bench.gpu_lock) the processes start at once, a few
    at a time, as soon as the bench begins: each takes about 20 s to start, import torch and
    load its compiled graph, and that overlaps this process's own timings, while every timed
    stretch still waits for the lock. Without the lock each runs alone when its case asks.

    The reference solution (`beside`) is timed there too, in turn with torch.compile's graph,
    so the two are compared at one clock (tutor.bench.isolated says why). The reference, not
    the learner's file: a kernel that crashes the process would take compile's column with it.
    So is a CUDA C++ drill's Triton sibling (`siblings`: function -> its file), where the
    recipe names one.
    """

    AT_ONCE = 4

    def __init__(
        self,
        cases: list,
        recipe_path: Path,
        beside: Path | None = None,
        language: str = "triton",
        host: Path | None = None,
        siblings: dict[str, Path] | None = None,
    ) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.recipe_path = recipe_path
        self.beside = (beside, language, host)
        self.siblings = siblings or {}
        self.labels = {case.label for case in cases}
        self.pool = None
        self.started: dict[str, Any] = {}
        if cases and os.environ.get(LOCK_ENV):
            self.pool = ThreadPoolExecutor(max_workers=self.AT_ONCE)
            for case in cases:
                self.started[case.label] = self.pool.submit(self._run, case)

    def wanted(self, case: Any) -> bool:
        return case.label in self.labels

    def result(self, case: Any) -> dict[str, Any]:
        future = self.started.get(case.label)
        return future.result() if future is not None else self._run(case)

    def close(self) -> None:
        """Cancel what has not started (a case skipped after a GPU error); let the rest end."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    def _run(self, case: Any) -> dict[str, Any]:
        return isolated(
            case,
            self.recipe_path,
            "compile",
            graph=True,
            beside=self.beside,
            sibling=self.siblings.get(case.function),
        )


def isolated(
    case: Any,
    recipe_path: Path,
    mode: str,
    graph: bool,
    timeout: float = ISOLATED_TIMEOUT_S,
    warm_only: bool = False,
    beside: tuple[Path | None, str, Path | None] = (None, "triton", None),
    sibling: Path | None = None,
) -> dict[str, Any]:
    """Time torch's `mode` (eager or compile) for `case` in a fresh process (tutor.bench.isolated).

    Returns its JSON row; {"error": ...} when it failed or ran past `timeout`. `warm_only`
    compiles and times nothing; `beside` is (a file whose version is timed in turn with the
    graph, its kernel language, the drill's host code), `sibling` a Triton file timed in turn
    too: see tutor.bench.isolated.
    """
    beside_file, language, host = beside
    import subprocess

    with tempfile.TemporaryDirectory(prefix="tutor-isolated-") as tmp:
        out = Path(tmp) / "row.json"
        cmd = (
            [
                sys.executable,
                "-m",
                "tutor.bench.isolated",
                "--recipe",
                str(recipe_path),
                "--function",
                case.function,
                "--shape",
                json.dumps(case.shape),
                "--dtype",
                case.dtype,
                "--mode",
                mode,
                "--out",
                str(out),
            ]
            + (["--graph"] if graph else [])
            + (["--warm-only"] if warm_only else [])
            + (["--beside", str(beside_file), "--language", language] if beside_file else [])
            + (["--host", str(host)] if beside_file and host is not None else [])
            + (["--sibling", str(sibling)] if sibling is not None else [])
        )
        try:
            subprocess.run(
                cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return {"error": f"{mode} did not finish in {timeout:.0f} s"}
        data = _read_json(out)
    return data or {"error": f"the {mode} process wrote no result"}


def _time_one(
    name: str, fn: Callable[..., Any], op: Any, base: tuple, expected: Any, row: BenchRow
) -> None:
    """`name`'s per-call time (do_bench median), after a first call checked against eager."""
    import torch

    from tutor.bench.recipe import IN_PLACE_SETS, clone_inputs, max_excess

    fresh = clone_inputs(base)
    returned = fn(*fresh)  # the first call compiles the kernels
    torch.cuda.synchronize()
    if expected is not None and name != EAGER:
        diff, excess = max_excess(op.results(fresh, returned), expected, row.dtype)
        row.max_diff[name] = diff if math.isfinite(diff) else None
        if excess > 1.0:
            row.notes.append(
                f"{SHOWN[name]} differs from torch eager at this shape (max |diff| {diff:.3g})"
            )
    del fresh, returned
    copies = IN_PLACE_SETS if op.in_place else 1
    sets = [clone_inputs(base) for _ in range(copies)]
    counter = iter(range(1 << 62))
    if len(sets) == 1:
        inputs = sets[0]
        call = lambda: fn(*inputs)
    else:
        call = lambda: fn(*sets[next(counter) % len(sets)])
    times = row.times.of(name)
    times.per_call_us = median_ms(call) * 1000.0
    written = [t for s in sets for t in op.results(s, None)] if op.in_place else []
    if not all(bool(torch.isfinite(t).all()) for t in written):
        row.notes.append(f"{SHOWN[name]}: the in-place inputs reached inf/NaN while timed")
    log(f"  {name:<9} {times.per_call_us:9.2f} µs")


def _graph_times(
    op: Any, fns: dict[str, Callable[..., Any]], base: tuple, row: BenchRow, l2: int
) -> None:
    """CUDA-graph replay time of each side timed here, replayed in turn (timing.graphs_us);
    the learner's captured after the others (its capture may fail), then a decode shape's
    copy of its bytes (_copy_of)."""
    from tutor.bench.recipe import clone_inputs

    count = graph_input_sets(row.bytes, l2)
    row.graph_input_sets = count
    sets = [clone_inputs(base) for _ in range(count)]
    calls = {
        name: (lambda k, fn=fns[name]: fn(*sets[k % count]))
        for name in (EAGER, REFERENCE, MINE)
        if name in fns and row.times.of(name).timed
    }
    floor = {}
    if row.decode and not row.flops and row.bytes and calls:
        floor[COPY_FLOOR] = _copy_of(row.bytes, count)
    times, failed = graphs_us({**calls, **floor})
    if floor:
        row.times.copy_floor.graph_us = times.get(COPY_FLOOR)
    for name in calls:
        if name in times:
            row.times.of(name).graph_us = times[name]
            log(f"  {name:<9} {times[name]:9.2f} µs per call in a CUDA graph")
        elif name in failed:  # e.g. a wrapper that synchronises
            row.errors[f"{name} (graph)"] = short_error(failed[name])


def _copy_of(bytes_moved: int, count: int) -> Callable[[int], Any]:
    """The k-th call of a torch copy that reads half of `bytes_moved` and writes the other
    half, in `count` pairs of buffers rotated as the inputs are.

    A decode shape's time is mostly the launch and one trip to DRAM and back, which no kernel
    of that traffic avoids: on an H100 a kernel that only loads fused_add_rmsnorm's 16 rows
    and stores them took 1.92 µs in a graph, one that also reduced each row 2.36, an empty
    launch 1.14 (docs/reports/2026-12-06/probes-f5-f3.md). This copy is that floor, measured
    in turn with the kernels it is set beside."""
    import torch

    words = max(1, bytes_moved // 2 // 4)  # int32 words each way
    sources = [torch.ones(words, dtype=torch.int32, device=DEVICE) for _ in range(count)]
    targets = [torch.empty_like(source) for source in sources]
    return lambda k: targets[k % count].copy_(sources[k % count])


# ---- small helpers ------------------------------------------------------------------------------


def short_error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def _fmt(value: float | None, digits: int = 0) -> str:
    return "?" if value is None else f"{value:.{digits}f}"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_regular(path))  # a FIFO there is no cache, never a hang
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically: a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, default=str)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


if __name__ == "__main__":
    sys.exit(main())
