"""The course proves itself through `tutor dev check`'s own rules (tutor.dev.check), on the CPU.

For every playable drill: its content rules hold (files, hint ladders of three stages, two or
more known-buggy kernels per declared mistake, names that are declared or generic), the
untouched starter fails as not started, the solution passes clean, every mutant in
drills/mutants/<drill>/ gets the diagnosis its file name says first, and every correct__ variant
passes clean. A drill's files run as `tutor dev check` runs them (tutor.dev.check.prove): on the
CPU in one child forked from a warm process, a session for each file. With
TUTOR_PROOFS_ON_GPU=1 they go to the GPU, a process for each file, forked from a warm process
for the GPU. Nothing here names a drill: a drill added to drills.yaml is proven with the rest.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.dev import check as devcheck
from tutor.run.runner import Runner
from tutor.run.warm import WarmPool

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = load_catalogue(CoursePaths(ROOT))
PLAYABLE = [d for d in CATALOGUE.drills if not d.coming]


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Runner:
    """Runs forked from a warm process (torch and triton imported once), on the CPU."""
    on_gpu = os.environ.get("TUTOR_PROOFS_ON_GPU") == "1"
    pool = WarmPool(tmp_path_factory.mktemp("warm"), cpu=not on_gpu)
    pool.ready.wait(timeout=120)  # else the first runs simply go cold
    yield Runner(CATALOGUE, force_cpu=not on_gpu, warm=pool)
    pool.close()


@pytest.mark.parametrize("drill", PLAYABLE, ids=[d.id for d in PLAYABLE])
def test_content_rules_hold(drill):
    broken = [f.line() for f in devcheck.content_findings(CATALOGUE, drill) if not f.ok]
    assert not broken, "\n".join(broken)


def _without_a_cpu_compiler(drill) -> bool:
    """A CUDA C++ drill runs on the CPU through the system's C++ compiler (tutor.kernels.cuda)."""
    return drill.language == "cuda" and not any(
        shutil.which(name) for name in ("c++", "g++", "clang++")
    )


@pytest.mark.parametrize("drill", PLAYABLE, ids=[d.id for d in PLAYABLE])
def test_every_file_gets_its_verdict(runner, drill):
    if _without_a_cpu_compiler(drill):
        pytest.skip("no C++ compiler here (.ci/run installs g++)")
    work = devcheck.targets(CATALOGUE, drill)
    findings = [devcheck.judge(t, result) for t, result in devcheck.prove(runner, work, jobs=1)]
    assert len(findings) == len(work) > 2  # the solution, the starter and the mutants
    wrong = [f.line() for f in findings if not f.ok]
    assert not wrong, "\n".join(wrong)
