"""Do the registers and spills the perf coach reports match what ptxas said for the same compile?

    python -m lab.ptxas_check --out DIR [--drills t2,b2]

The coach reads `n_regs` and `n_spills` from the CompiledKernel of each launch
(tutor.bench.facts). This script benches each drill's solution at its first case and every perf
mutant that spills (`perf-spills__*`) at its `bench-case:`, each in a fresh Triton cache with
TRITON_DUMP_PTXAS_LOG=1, so that each kernel is compiled there and Triton prints ptxas's own
verbose log of that compile
("Used N registers", "N bytes stack frame, N bytes spill stores"), and compares: registers equal,
and the local memory equal to ptxas's stack frame (Triton's `n_spills` counts it in 4-byte words:
on the H200, 54 against a 216-byte frame). A kernel name compiled twice (the learner's kernel and
the reference's often share one) matches when one of its compiles does. Writes
DIR/ptxas-check.json and a Markdown table beside it. Needs a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from lab.common import ROOT
from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.dev.perfcheck import NO_PERF_DIAGNOSIS, perf_targets

FUNCTION = re.compile(r"Function properties for (\S+)")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
SPILL_WORD = 4  # bytes in one unit of Triton's n_spills


def ptxas_functions(log: str) -> dict[str, list[dict[str, int]]]:
    """Each compile's registers, stack frame and spill stores, by function name, from ptxas's
    verbose log."""
    found: dict[str, list[dict[str, int]]] = {}
    current = None
    for line in log.splitlines():
        if match := FUNCTION.search(line):
            current = {}
            found.setdefault(match.group(1), []).append(current)
        elif current is not None and (match := FRAME.search(line)):
            current["stack_frame"], current["spill_stores"] = map(int, match.groups()[:2])
        elif current is not None and (match := USED.search(line)):
            current["regs"] = int(match.group(1))
            current = None
    return found


def check_file(drill: str, impl: Path, label: str, case: int) -> list[dict]:
    """Bench `impl` at `case` in a fresh cache; one row per launch of `impl` (the "mine" side of
    the bench report)."""
    with tempfile.TemporaryDirectory(prefix="ptxas-check-") as tmp:
        out = Path(tmp) / "report.json"
        env = dict(os.environ, TRITON_CACHE_DIR=str(Path(tmp) / "cache"))
        env["TRITON_DUMP_PTXAS_LOG"] = "1"
        done = subprocess.run(
            [sys.executable, "-m", "tutor.bench.child", "--drill", drill, "--impl", str(impl)]
            + ["--out", str(out), "--root", str(ROOT), "--cases", str(case), "--no-compile"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        compiled = ptxas_functions(done.stdout + done.stderr)
        report = json.loads(out.read_text()) if out.exists() else {}
    rows = []
    for case in report.get("rows", [])[:1]:
        facts = case.get("facts", {}).get("mine") or {}
        for launch in facts.get("launches", []):
            compiles = compiled.get(launch.get("kernel"), [])
            same = [c for c in compiles if _same(launch, c)]
            seen = (same or compiles or [{}])[0]
            rows.append(
                {
                    "drill": drill,
                    "file": label,
                    "kernel": launch.get("kernel"),
                    "n_regs": launch.get("n_regs"),
                    "ptxas_regs": seen.get("regs"),
                    "n_spills": launch.get("n_spills"),
                    "ptxas_stack_frame": seen.get("stack_frame"),
                    "ptxas_spill_stores": seen.get("spill_stores"),
                    "match": bool(same),
                }
            )
    if not rows:
        error = report.get("message") or done.stdout[-300:] or "no launch seen"
        rows.append({"drill": drill, "file": label, "kernel": None, "match": False, "error": error})
    return rows


def _same(launch: dict, compiled: dict[str, int]) -> bool:
    spills = launch.get("n_spills")
    return (
        launch.get("n_regs") == compiled.get("regs")
        and spills is not None
        and spills * SPILL_WORD == compiled.get("stack_frame")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--drills", default=None)
    args = parser.parse_args()
    catalogue = load_catalogue(CoursePaths(ROOT))
    wanted = args.drills.split(",") if args.drills else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for drill in catalogue.drills:
        if drill.coming or (wanted and drill.id not in wanted):
            continue
        for target in perf_targets(catalogue, drill):
            if target.expect in (NO_PERF_DIAGNOSIS, "spills"):
                rows += check_file(drill.id, target.path, target.name, target.cases[0])
                print(json.dumps(rows[-1]), flush=True)
                _write(out, rows)  # after every file: a run stopped by a time limit keeps them
    print(_write(out, rows))
    return 0


def _write(out: Path, rows: list[dict]) -> str:
    """DIR/ptxas-check.json and its Markdown table; returns the table."""
    (out / "ptxas-check.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [
        "| drill | file | kernel | n_regs | ptxas registers | n_spills (4-byte words) | "
        "ptxas stack frame | ptxas spill stores | match |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['drill']} | {row['file']} | {row.get('kernel')} | {row.get('n_regs')} | "
            f"{row.get('ptxas_regs')} | {row.get('n_spills')} | {row.get('ptxas_stack_frame')} | "
            f"{row.get('ptxas_spill_stores')} | {'yes' if row['match'] else 'NO'} |"
        )
    matched = sum(row["match"] for row in rows)
    lines.append(f"\n{matched} of {len(rows)} launches match ptxas.")
    table = "\n".join(lines) + "\n"
    (out / "ptxas-check.md").write_text(table)
    return table


if __name__ == "__main__":
    sys.exit(main())
