"""`tutor ...` as a learner types it: a new process on a course folder, its output captured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tutor.course.paths import CoursePaths
from tutor.dev import patches


def tutor(
    course: CoursePaths, *args: str, timeout: float = 300, root_from_env: bool = False, **kw: Any
) -> subprocess.CompletedProcess:
    """Runs `python -m tutor ARGS` in the course folder, which is named with --root, or with
    TUTOR_ROOT when `root_from_env`; other keywords go to subprocess.run."""
    if root_from_env:
        kw["env"] = dict(kw.get("env", os.environ), TUTOR_ROOT=str(course.root))
        command = [sys.executable, "-m", "tutor", *args]
    else:
        command = [sys.executable, "-m", "tutor", "--root", str(course.root), *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=course.root, **kw
    )


def padding_where_mutant(course: CoursePaths) -> Path:
    """A T3 file whose mistake is padding-where (no tl.where before the variance): the course's
    solution with that mutant's patch applied, written once into the course folder."""
    built = course.root / "padding_where_mutant.py"
    if not built.exists():
        solution = course.solution("t3_layernorm.py").read_text()
        patch = (course.mutants("t3") / "padding-where__no-where.patch").read_text()
        built.write_text(patches.apply(solution, patch))
    return built
