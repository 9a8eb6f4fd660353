"""The course proves itself through `tutor dev check`'s own rules (tutor.dev.check), on the CPU.

For every playable drill: its content rules hold (files, hint ladders of three stages, two or
more known-buggy kernels per declared mistake, names that are declared or generic), the
untouched starter fails as not started, the solution passes clean, every mutant in
drills/mutants/<drill>/ gets the diagnosis its file name says first, and every correct__ variant
passes clean. The runs are forked from a warm process (tutor.warm), as the app's are. With
TUTOR_PROOFS_ON_GPU=1 the same runs go to the GPU, forked from a warm process for the GPU.
Nothing here names a drill: a drill added to drills.yaml is proven with the rest.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tutor.catalogue import load_catalogue
from tutor.dev import check as devcheck
from tutor.paths import CoursePaths
from tutor.runner import Runner
from tutor.warm import WarmPool

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = load_catalogue(CoursePaths(ROOT))
PLAYABLE = [d for d in CATALOGUE.drills if not d.coming]
TARGETS = [t for drill in PLAYABLE for t in devcheck.targets(CATALOGUE, drill)]


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


@pytest.mark.parametrize("target", TARGETS, ids=[t.label for t in TARGETS])
def test_file_gets_its_verdict(runner, target):
    assert not target.stale, target.stale
    finding = devcheck.judge(target, runner.run(target.drill, str(target.path)))
    assert finding.ok, finding.line()
