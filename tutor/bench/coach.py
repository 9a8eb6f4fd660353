"""The perf coach over a bench report: every timed case's facts judged by the rules.

    coach_rows(report)         # in the bench process, after every case is timed
    row["perf"]                # [{"id", "text", "numbers"}, ...], most specific first
    row["perf_verdict"]        # "spills", ..., or "at-reference"

Each case is judged against its yardstick (tutor.bench.rules): the reference solution for a
learner's file, torch eager for the reference itself. A drill's own perf rules come from its
bench recipe (`Recipe.levers`), checked before the common ones. Everything stays plain JSON, so
the tutor's process (which never imports torch) reads the verdicts with the rest of the report.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tutor.bench.rules import Case, Side, diagnose, verdict

SIDES = {"mine": "your kernel", "reference": "the reference", "eager": "torch eager"}


def side(row: dict[str, Any], name: str) -> Side | None:
    """One implementation's facts in a bench row; None when it was not timed."""
    if name not in row.get("us", {}):
        return None
    facts = row.get("facts", {}).get(name, {})
    return Side(
        SIDES.get(name, name),
        us=row["us"].get(name),
        graph_us=row.get("graph_us", {}).get(name),
        launches=[x for x in facts.get("launches", []) if "error" not in x],
        kernels=list(facts.get("kernels", [])),
    )


def yardstick(row: dict[str, Any], reference_is_impl: bool) -> str | None:
    """What the learner's kernel is measured against at this case."""
    if not reference_is_impl and "reference" in row.get("us", {}):
        return "reference"
    return "eager" if "eager" in row.get("us", {}) else None


def case_of(row: dict[str, Any], report: dict[str, Any]) -> Case | None:
    mine = side(row, "mine")
    if mine is None:
        return None
    against = yardstick(row, bool(report.get("reference_is_impl")))
    return Case(
        label=row.get("label", "?"),
        mine=mine,
        baseline=side(row, against) if against else None,
        limits=report.get("limits") or {},
        bytes=int(row.get("bytes") or 0),
        flops=row.get("flops"),
        decode=bool(row.get("decode")),
        copy_gbps=report.get("copy_gbps"),
        launch_us=report.get("launch_us"),
        launch_graph_us=report.get("launch_graph_us"),
        shape=dict(row.get("shape", {})),
        function=row.get("function", ""),
    )


def coach_rows(report: dict[str, Any], levers: dict[str, tuple] | None = None) -> None:
    """Judge every timed row of `report` (the bench process's JSON) in place.

    `levers` maps a function name to the drill's own rules for it (from its recipe).
    """
    rows = report.get("rows", [])
    cases = [(row, case_of(row, report)) for row in rows]
    judged = [case for _, case in cases if case is not None]
    for row, case in cases:
        if case is None:
            continue
        case.others = [other for other in judged if other is not case]
        findings = diagnose(case, tuple((levers or {}).get(case.function, ())))
        row["yardstick"] = case.baseline.name if case.baseline else None
        row["perf_ratio"] = case.ratio
        row["perf"] = [asdict(finding) for finding in findings]
        row["perf_verdict"] = verdict(case, findings) if case.baseline else None
