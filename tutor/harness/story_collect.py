"""Collect the English a drill's tests can show: `python -m tutor.harness.story_collect [--gpu]
TEST SOLUTION OUT.json [MUTANT ...]` (`tutor dev stories` runs it; learner code is not involved,
only the course's own files).

The tests run twice on the solution, on the CPU (on the GPU with `--gpu`: a test may say
something there that it never says on the interpreter, e.g. a race seen only on a GPU), with
every `Suspect` and output name recorded: once as they are (every suspect list a correct
kernel's run builds), and once with each comparison without suspects failing and each with
suspects passing, so that suspects built only for a wrong output (a function passed as
`suspects`, as the drills' tests do) are built too and the test goes on to its other
comparisons. Then once on each known-buggy kernel given (the drill's mutants), so the words a
test writes only for a failure (a `DrillFailure`'s message and evidence) are recorded too. The
union is written to OUT.json, sorted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tutor.course.catalogue import KERNEL_LANGUAGES
from tutor.harness import story_text


def _run(test_file: str, impl: str, gpu: bool) -> None:
    backend = [] if gpu else ["--cpu"]
    # The drill's kernel language, known by its files' suffix (a .cu drill runs as CUDA C++).
    language = {suffix: name for name, suffix in KERNEL_LANGUAGES.items()}[Path(impl).suffix]
    pytest.main(
        [test_file, "--impl", impl, "--kernel-language", language, *backend, "-q"]
        + ["-p", "no:cacheprovider", "-p", "no:xdist"]
    )


def main(argv: list[str]) -> int:
    gpu = bool(argv) and argv[0] == "--gpu"
    test_file, solution, out, *mutants = argv[1:] if gpu else argv
    story_text.collecting = True
    for forcing in (False, True):
        story_text.forcing = forcing
        _run(test_file, solution, gpu)
    story_text.forcing = False
    for mutant in mutants:
        _run(test_file, mutant, gpu)
    Path(out).write_text(json.dumps(sorted(story_text.seen), ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
