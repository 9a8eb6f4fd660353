"""Benches recorded on an H200 or an H100 (tests/data/perf-facts-<card>-<date>.json), for the
tests of the perf coach on machines without a GPU: each entry is the bench process's record for
one file (a solution or a slow kernel in drills/mutants/*/perf-*) at its case. A later file's
entry replaces an earlier one's for the same file (its facts have fields the earlier lacks)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from tutor import bench
from tutor.bench.coach import coach_rows
from tutor.bench.recipe import load_recipes
from tutor.bench.record import BenchRecord
from tutor.states import BenchStatus

ROOT = Path(__file__).resolve().parents[1]


def _recorded() -> dict:
    # perf-facts-<card>-<yyyy-mm-dd>.json: sorted by the date, oldest first, whatever the card
    files = sorted((ROOT / "tests" / "data").glob("perf-facts-*.json"), key=lambda p: p.stem[-10:])
    newest: dict[tuple[str, str], dict] = {}
    for path in files:
        for bench_entry in json.loads(path.read_text())["benches"]:
            newest[(bench_entry["drill"], bench_entry["file"])] = bench_entry
    return {"recorded": [path.name for path in files], "benches": list(newest.values())}


RECORDED = _recorded()


def entry(drill: str, file: str) -> dict:
    return next(e for e in RECORDED["benches"] if e["drill"] == drill and e["file"] == file)


def recorded_record(entry: dict) -> BenchRecord:
    """A recorded bench as the record the bench process wrote (tutor.bench.record reads the
    first schema, in which most of tests/data is kept), to change before judging."""
    record = BenchRecord.from_json(copy.deepcopy(entry["report"]))
    record.drill, record.impl = entry["drill"], entry["file"]
    return record


def recorded_report(entry: dict, recipe: Path) -> bench.BenchReport:
    """A recorded bench process's record, judged as the bench process judges it, then read as
    `tutor bench` reads it."""
    record = recorded_record(entry)
    levers = {name: r.levers for name, r in load_recipes(recipe).items()}
    coach_rows(record, levers)
    record.status = BenchStatus.TIMED
    for row in record.rows:
        row.dtype = row.label.split()[-1]
    report = bench.BenchReport(
        drill=entry["drill"], impl=entry["file"], status=BenchStatus.TIMED, impl_name="mine"
    )
    bench.merge(report, record.to_json())
    return report
