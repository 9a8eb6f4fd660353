"""`tutor dev rebase`: carry a drill's one-idea patches over a change to the files under them.

    tutor dev rebase DRILL [--since REV]                      # every patch, from REV's bases
    tutor dev rebase DRILL --onto correct__VARIANT.py [--since REV]

A `.patch` mutant is a diff against the solution (or its `base:` variant) as that file was when
the patch was made. For each patch that no longer applies, its base file is read as it was at
REV (default HEAD, the last commit) and the patch is remade on today's file
(tutor.dev.patches.rebase: each edit moves with the unchanged lines it sits in). A patch whose
edit meets a changed line is named and left to a person. `--onto` moves every patch built on
the solution onto a correct variant instead, giving each the variant's `base:` line (when the
solution grows a path the drill does not teach, the taught version stays as that variant).
Run `tutor dev check DRILL` afterwards: it proves the remade mutants.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths, find_root
from tutor.dev.patches import PatchError, apply, base, onto, rebase


def _at(rev: str, path: Path, root: Path) -> str | None:
    """`path`'s text at git revision `rev`, or None where git has no such file there."""
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    done = subprocess.run(
        ["git", "show", f"{rev}:{relative}"], cwd=root, capture_output=True, text=True
    )
    return done.stdout if done.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tutor dev rebase", description=__doc__.splitlines()[0])
    parser.add_argument("drill")
    parser.add_argument("--since", default="HEAD", help="the revision the patches were made at")
    parser.add_argument("--onto", metavar="correct__VARIANT.py", help="move onto this variant")
    args = parser.parse_args(argv)
    paths = CoursePaths(find_root())
    catalogue = load_catalogue(paths)
    try:
        drill = catalogue.drill(args.drill)
    except KeyError as exc:
        parser.error(exc.args[0])
    solution, folder = paths.solution(drill.file), paths.mutants(drill.id)
    variant = (folder / args.onto).read_text(encoding="utf-8") if args.onto else None
    failed = 0
    for path in sorted(folder.glob("*.patch")):
        text = path.read_text(encoding="utf-8")
        base_name = base(text)
        if variant is not None and base_name is not None:
            continue  # --onto moves only the patches built on the solution
        base_path = folder / base_name if base_name else solution
        then = _at(args.since, base_path, paths.root)
        try:
            if variant is not None:
                remade = onto(_required(then, base_path, args.since), variant, text, args.onto)
            elif _applies(base_path.read_text(encoding="utf-8"), text):
                continue
            else:
                today = base_path.read_text(encoding="utf-8")
                remade = rebase(_required(then, base_path, args.since), today, text, base_path.name)
        except PatchError as exc:
            failed += 1
            print(f"{path}: {exc}")
            continue
        path.write_text(remade, encoding="utf-8")
        print(f"{'moved' if variant is not None else 'rebased'} {path}")
    return 1 if failed else 0


def _applies(base_text: str, patch: str) -> bool:
    try:
        apply(base_text, patch)
    except PatchError:
        return False
    return True


def _required(text: str | None, path: Path, rev: str) -> str:
    if text is None:
        raise PatchError(f"{path.name} is not in git at {rev}: give --since a revision that has it")
    return text
