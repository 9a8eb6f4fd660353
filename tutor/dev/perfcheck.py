"""`tutor dev check --gpu`: the perf coach proves itself on a GPU, as the diagnoses do on any.

For each drill with bench shapes: the reference solution, benched at the drill's first case,
must get no perf diagnosis (its yardstick there is torch eager), and every slow but correct
kernel `drills/mutants/<id>/perf-<perf diagnosis>__<variant>.py` (or `.patch`, built as dev
check builds it) must get that diagnosis first
at its case: the cases a `bench-case: N[,M]` line names (the verdict is read at the first; the
others are timed beside it, for rules that compare cases, such as causal against non-causal),
else the drill's first. Benches run one after another (timings must not share the GPU), with
the tests skipped (tutor dev check runs them) and without torch.compile.

The rows go to `tutor dev report`'s `coach` list as {drill, file, expected, got}.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tutor import bench
from tutor.course.catalogue import Catalogue, Drill
from tutor.dev.check import SOLUTION, Finding, perf_expectation, targets

NO_PERF_DIAGNOSIS = "none"
BENCH_CASE = re.compile(r"^\s*#?\s*bench-case:\s*([0-9][0-9,\s]*)$", re.MULTILINE)
PERF_TIMEOUT_S = 240.0  # one file's bench: its first compile, do_bench, a graph, the profiler


@dataclass(frozen=True)
class PerfTarget:
    drill: str
    name: str  # "solution" or the mutant's file name
    path: Path
    expect: str  # a perf diagnosis id, or NO_PERF_DIAGNOSIS
    cases: tuple[int, ...]  # bench case numbers; the verdict is read at the first


@dataclass(frozen=True)
class PerfRow:
    """One target's outcome: what it had to get and what it got (`got` is the verdict)."""

    drill: str
    file: str
    expected: str
    got: str
    ok: bool
    detail: str = ""


def bench_cases_of(path: Path, drill: Drill) -> tuple[int, ...]:
    """The cases a perf mutant's `bench-case:` line names (valid numbers only), else (0,)."""
    try:
        head = path.read_text(encoding="utf-8")[:4000]
    except (OSError, UnicodeDecodeError):
        return (0,)
    match = BENCH_CASE.search(head)
    if not match:
        return (0,)
    numbers = [int(n) for n in re.findall(r"\d+", match.group(1))]
    chosen = tuple(n for n in numbers if n < len(drill.bench))
    return chosen or (0,)


def perf_targets(catalogue: Catalogue, drill: Drill) -> list[PerfTarget]:
    if not drill.bench:
        return []
    found = [
        PerfTarget(
            drill.id, SOLUTION, catalogue.paths.solution(drill.file), NO_PERF_DIAGNOSIS, (0,)
        )
    ]
    for target in targets(catalogue, drill, starter=False):
        source = catalogue.paths.mutants(drill.id) / target.name
        expected = perf_expectation(source)
        if expected and not target.stale:  # a stale patch is dev check's finding already
            found.append(
                PerfTarget(
                    drill.id, target.name, target.path, expected, bench_cases_of(source, drill)
                )
            )
    return found


def judge(target: PerfTarget, report: bench.BenchReport) -> PerfRow:
    """Whether the bench of `target` gave what it must."""
    row = report.rows[0] if report.rows else None
    if not report.timed or row is None or not row.times.mine.timed:
        got = f"not timed ({report.status})"
        return PerfRow(target.drill, target.name, target.expect, got, False, report.message[:300])
    named = [f["id"] for f in row.perf]
    got = row.perf_verdict or "no yardstick"
    detail = f"{row.short_label}: {row.perf[0]['text']}" if row.perf else row.short_label
    if target.expect == NO_PERF_DIAGNOSIS:
        # `slower` names no cause: the reference is slower than torch eager there, and says so.
        ok = not named or named == ["slower"]
    else:
        ok = bool(named) and named[0] == target.expect
    return PerfRow(target.drill, target.name, target.expect, got, ok, detail[:400])


def check_perf(
    catalogue: Catalogue,
    drill_ids: Iterable[str] | None = None,
    *,
    warm=None,
    host=None,
    on_row: Callable[[PerfRow], None] | None = None,
    on_report: Callable[[PerfTarget, bench.BenchReport], None] | None = None,
    timeout: float = PERF_TIMEOUT_S,
    made: Callable[[PerfTarget], bench.BenchReport | None] | None = None,
    deadline: float | None = None,
) -> list[PerfRow]:
    """Bench every perf target of the drills asked for (all by default), one at a time.

    `made` may hand over a bench already run for a target (the GPU report benches every
    solution before the coach runs): that target is judged on it instead of benched again.
    Past `deadline` (time.monotonic()) no bench starts, and none runs beyond it: the rows
    judged by then are returned, the targets left have none."""
    chosen = (
        [catalogue.drill(d) for d in drill_ids]
        if drill_ids
        else [d for d in catalogue.drills if not d.coming]
    )
    rows = []
    for drill in chosen:
        for target in perf_targets(catalogue, drill):
            report = made(target) if made is not None else None
            left = timeout if deadline is None else min(timeout, deadline - time.monotonic())
            if report is None and left <= 0:
                return rows
            if report is None:
                report = bench.bench_drill(
                    catalogue,
                    drill.id,
                    str(target.path),
                    verify=False,
                    compile=False,
                    cases=[str(n) for n in target.cases],
                    timeout=left,
                    warm=warm,
                    gpu=True,
                    host=host,
                )
            if on_report is not None:
                on_report(target, report)
            row = judge(target, report)
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def as_findings(rows: list[PerfRow]) -> list[Finding]:
    return [
        Finding(
            row.drill,
            f"{row.file} (perf)",
            row.ok,
            f"{row.got}, as it must"
            if row.ok
            else f"must give {row.expected}, gave {row.got}"
            + (f" ({row.detail})" if row.detail else ""),
        )
        for row in rows
    ]
