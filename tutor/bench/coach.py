"""The perf coach over a bench record: every timed case's facts judged by the rules.

    coach_rows(record)         # in the bench process, after every case is timed
    row.perf                   # [{"id", "text", "numbers"}, ...], most specific first
    row.perf_verdict           # "spills", ..., or "at-reference"

Each case is judged against its yardstick (tutor.bench.rules): the reference solution for a
learner's file, torch eager for the reference itself. A drill's own perf rules come from its
bench recipe (`Recipe.levers`), checked before the common ones. The verdicts are plain JSON in
the record (tutor.bench.record), so the tutor's process (which never imports torch) reads them
with the rest of the report.
"""

from __future__ import annotations

from dataclasses import asdict

from tutor.bench.record import EAGER, MINE, REFERENCE, SHOWN, BenchRecord, BenchRow
from tutor.bench.rules import Case, Side, diagnose, verdict


def side(row: BenchRow, name: str) -> Side | None:
    """One side's facts at a bench case; None when it was not timed."""
    times = row.times.of(name)
    if not times.timed:
        return None
    facts = row.facts.get(name, {})
    return Side(
        SHOWN[name],
        per_call_us=times.per_call_us,
        graph_us=times.graph_us,
        launches=[x for x in facts.get("launches", []) if "error" not in x],
        kernels=list(facts.get("kernels", [])),
    )


def yardstick(row: BenchRow, reference_is_impl: bool) -> str | None:
    """What the learner's kernel is measured against at this case."""
    if not reference_is_impl and row.times.reference.timed:
        return REFERENCE
    return EAGER if row.times.eager.timed else None


def case_of(row: BenchRow, record: BenchRecord) -> Case | None:
    mine = side(row, MINE)
    if mine is None:
        return None
    against = yardstick(row, record.reference_is_impl)
    return Case(
        label=row.label,
        mine=mine,
        baseline=side(row, against) if against else None,
        limits=record.limits,
        bytes=row.bytes,
        flops=row.flops,
        decode=row.decode,
        copy_gbps=record.copy_gbps,
        launch_us=record.launch_us,
        launch_graph_us=record.launch_graph_us,
        shape=dict(row.shape),
        function=row.function,
    )


def coach_rows(record: BenchRecord, levers: dict[str, tuple] | None = None) -> None:
    """Judge every timed case of `record` in place.

    `levers` maps a function name to the drill's own rules for it (from its recipe).
    """
    cases = [(row, case_of(row, record)) for row in record.rows]
    judged = [case for _, case in cases if case is not None]
    for row, case in cases:
        if case is None:
            continue
        case.others = [other for other in judged if other is not case]
        findings = diagnose(case, tuple((levers or {}).get(case.function, ())))
        row.yardstick = case.baseline.name if case.baseline else None
        row.perf_ratio = case.ratio
        row.perf = [asdict(finding) for finding in findings]
        row.perf_verdict = verdict(case, findings) if case.baseline else None
