#!/usr/bin/env python3
"""Carry a drill's one-idea patches over a change to its solution (or to a correct variant).

    python scripts/rebase_patches.py DRILL [--since REV]

A `.patch` mutant is a diff against the solution (or the `base:` variant) as it was when the
patch was made; once that file changes, hunks no longer apply. For every patch whose base file
differs from REV (default HEAD), this rebuilds the mutant from REV's base, merges its one idea
into today's base with `git merge-file` (a three-way merge), and rewrites the patch against
today's base. A patch whose idea touches the lines that changed is left alone and named, to be
redone by hand. Run `tutor dev check DRILL` afterwards: it proves the rebuilt mutants.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tutor.catalogue import load_catalogue  # noqa: E402
from tutor.dev import patches  # noqa: E402
from tutor.paths import CoursePaths  # noqa: E402


def _at(rev: str, path: Path) -> str | None:
    """`path`'s text at git revision `rev`, or None if it did not exist there."""
    done = subprocess.run(
        ["git", "show", f"{rev}:{path.relative_to(ROOT).as_posix()}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return done.stdout if done.returncode == 0 else None


def _applies(base_text: str, patch: str) -> bool:
    try:
        patches.apply(base_text, patch)
    except patches.PatchError:
        return False
    return True


def _merge(today: str, then: str, mutant_then: str) -> str | None:
    """`mutant_then`'s change from `then`, merged into `today`; None on a conflict."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, text in (("today", today), ("then", then), ("mutant", mutant_then)):
            path = Path(tmp) / name
            path.write_text(text)
            files.append(str(path))
        done = subprocess.run(["git", "merge-file", "-p", *files], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drill")
    parser.add_argument("--since", default="HEAD", help="the revision the patches were made at")
    args = parser.parse_args()
    course = CoursePaths(ROOT)
    drill = load_catalogue(course).drill(args.drill)
    solution, mutants = course.solution(drill.file), course.mutants(drill.id)
    moved, by_hand = 0, []
    for patch_path in sorted(mutants.glob("*.patch")):
        text = patch_path.read_text()
        base_name = patches.base(text)
        base_path = mutants / base_name if base_name else solution
        then, today = _at(args.since, base_path), base_path.read_text()
        if then is None or then == today or _applies(today, text):
            continue
        mutant = _merge(today, then, patches.apply(then, text, base_path.name))
        if mutant is None:
            by_hand.append(patch_path.name)
            continue
        description = patches.description(text)
        patch_path.write_text(patches.make(today, mutant, solution.name, description))
        moved += 1
    print(
        f"{drill.id}: {moved} patches carried over"
        + (f"; redo by hand: {', '.join(by_hand)}" if by_hand else "")
    )
    return 1 if by_hand else 0


if __name__ == "__main__":
    raise SystemExit(main())
