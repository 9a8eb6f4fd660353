"""`tutor dev stories`: collect the English each drill's tests can show into drills/stories/.

    tutor dev stories t3 [f3 ...]     # collect again after a drill test changed
    tutor dev stories --gpu t3 [...]  # on a GPU: add what the tests say only there

The tests run on the solution (twice: as they are, and with every comparison failing, so
suspects built only for a wrong output are built too) and once on each known-buggy kernel
(tutor.harness.story_collect). `--gpu` keeps what the file holds (when it was collected from
the same test file) and adds what the tests show on the GPU, so the CPU's collection and the
GPU's end in one list. tutor.course.stories reads what this writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths, find_root
from tutor.course.stories import FORMAT, KEY, SHA_KEY, read_collected, table_for
from tutor.course.translations import sha256_of
from tutor.course.yamlfile import YamlFileError
from tutor.dev.check import targets
from tutor.lang.i18n import CHINESE


def write_collected(path: Path, drill_id: str, test_file: Path, english: list[str]) -> None:
    header = (
        f"# The English {drill_id}'s tests can show a learner (suspect stories, output names),\n"
        f"# collected by running them: `tutor dev stories {drill_id}` writes this file.\n"
        f"# Translations: the `{KEY}:` map of hints/{drill_id}.<lang>.yaml.\n"
    )
    body = yaml.safe_dump(
        {"format": FORMAT, SHA_KEY: sha256_of(test_file), KEY: sorted(set(english))},
        allow_unicode=True,
        width=100,
        sort_keys=False,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(header + body, encoding="utf-8")
    tmp.replace(path)


def _kept(stored: Path, test_file: Path) -> list[str]:
    """What `stored` holds, when it was collected from this `test_file` (else nothing)."""
    try:
        sha, english = read_collected(stored)
    except (OSError, YamlFileError):
        return []
    return english if sha == sha256_of(test_file) else []


def collect(
    test_file: Path, solution: Path, root: Path, mutants: tuple[Path, ...] = (), gpu: bool = False
) -> list[str]:
    """Run `test_file` on `solution` (and on each known-buggy kernel in `mutants`) in a child,
    on the CPU interpreter or with `gpu` on the GPU, and return the English its tests built."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stories.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "tutor.harness.story_collect",
                *(["--gpu"] if gpu else []),
                str(test_file),
                str(solution),
                str(out),
                *map(str, mutants),
            ],
            cwd=root,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return json.loads(out.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    """`tutor dev stories [--gpu] ID [ID ...]`: collect each drill's English into
    drills/stories/ (with --gpu, add to it what the tests show on the GPU)."""
    parser = argparse.ArgumentParser(
        prog="tutor dev stories",
        description="Collect the English each drill's tests can show into drills/stories/.",
    )
    parser.add_argument("drills", nargs="*", metavar="DRILL", help="default: every drill")
    parser.add_argument(
        "--gpu", action="store_true", help="on a GPU: add what the tests show only there"
    )
    args = parser.parse_args(argv)
    paths = CoursePaths(find_root())
    catalogue = load_catalogue(paths)
    known = [d.id for d in catalogue.drills]
    unknown = [i for i in args.drills if i not in known]
    if unknown:
        parser.error(f"no drill {', '.join(unknown)} in drills.yaml (known: {', '.join(known)})")
    for drill in [catalogue.drill(i) for i in args.drills] or catalogue.drills:
        test_file = paths.test_file(drill.file)
        buggy = tuple(
            t.path
            for t in targets(catalogue, drill, starter=False)
            if t.expect != "pass" and not t.stale
        )
        english = collect(test_file, paths.solution(drill.file), paths.root, buggy, args.gpu)
        target = paths.stories(drill.id)
        if args.gpu:
            english += _kept(target, test_file)
        write_collected(target, drill.id, test_file, english)
        table = table_for(paths.hints(drill.id), CHINESE)
        untranslated = [s for s in sorted(set(english)) if table.lacks(s)]
        print(
            f"{target.relative_to(paths.root)}: {len(set(english))} texts, "
            f"{len(untranslated)} without Chinese"
        )
        for story in untranslated:
            print(f"  {story}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
