"""Bench every perf target (each slow kernel and each solution) and keep the raw reports.

    python -m lab.perf_facts --out DIR [--drills t0,m1]

What `tutor dev check --gpu` judges, with every bench report written whole to
DIR/perf-facts.json: the launches' compile facts, the profiled kernels and the times of each
file, which tests/data/ keeps as recorded facts for the perf rules' tests on the CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lab.common import ROOT
from tutor.bench.record import BenchRecord
from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.dev.perfcheck import check_perf
from tutor.run.warm import WarmPool


def child_json(target_name: str, report: dict) -> dict:
    """A bench report (`BenchReport.to_json()`) as the bench process wrote it, the bench record
    (tutor.bench.record) tests/recorded.py judges again."""
    record = BenchRecord.from_json(report)
    record.reference_is_impl = target_name == "solution"
    return record.to_json()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--drills", default=None)
    args = parser.parse_args()
    catalogue = load_catalogue(CoursePaths(ROOT))
    out = Path(args.out) / "perf-facts.json"
    kept: list[dict] = []

    def keep(target, report) -> None:
        kept.append(
            {
                "drill": target.drill,
                "file": target.name,
                "expected": target.expect,
                "report": child_json(target.name, report.to_json()),
            }
        )
        out.write_text(json.dumps(kept, indent=1, default=str), encoding="utf-8")

    pool = WarmPool.for_course(catalogue.paths, cpu=False)
    pool.ready.wait(180)
    print(f"warm process: {pool.facts}", flush=True)
    drills = args.drills.split(",") if args.drills else None
    rows = check_perf(
        catalogue, drills, warm=pool, on_report=keep, on_row=lambda row: print(row, flush=True)
    )
    pool.close()
    print(f"{sum(r.ok for r in rows)} of {len(rows)} as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
