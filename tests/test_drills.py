"""The course proves itself, as rustlings' `dev check` does: on the CPU interpreter every
solution passes with no diagnosis, every untouched starter fails as not started, every known-buggy
kernel in tests/mutants/<drill>/ gets its own diagnosis first, and every correct alternative
(correct__*.py) passes.

A mutant's file name says what it must be diagnosed as: `<diagnosis>__<variant>.py`.
With TUTOR_PROOFS_ON_GPU=1 the same proofs run on the GPU (see docs/gpu-report-*.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tutor import diagnoses as dx
from tutor import results as r
from tutor.catalogue import load_catalogue
from tutor.paths import CoursePaths
from tutor.runner import Runner

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "tests" / "mutants"
CATALOGUE = load_catalogue(CoursePaths(ROOT))
PLAYABLE = [d.id for d in CATALOGUE.drills if not d.coming]

# The seeded mistakes of DESIGN.md: each needs a hint ladder and at least two mutants.
SEEDED = {
    "t1": ["gelu-approximation", "tanh-identity"],
    "t2": ["padding-neg-inf", "no-max-subtraction"],
    "t3": [
        "padding-where",
        "divide-by-block",
        "unbiased-variance",
        "one-pass-variance",
        "stats-dtype",
    ],
    "f3": ["view-not-reshape", "residual-writeback", "rstd-from-rounded", "gate-up-order"],
}


def _mutants() -> list:
    cases = []
    for path in sorted(MUTANTS.glob("*/*.py")):
        drill, expected = path.parent.name, path.stem.split("__")[0]
        cases.append(pytest.param(drill, path, expected, id=f"{drill}/{path.stem}"))
    return cases


@pytest.fixture(scope="module")
def runner() -> Runner:
    return Runner(CATALOGUE, force_cpu=os.environ.get("TUTOR_PROOFS_ON_GPU") != "1")


@pytest.mark.parametrize("drill", PLAYABLE)
def test_solution_passes_without_diagnosis(runner, drill):
    result = runner.run(drill, "solutions")
    assert result.status == r.PASSED, result.output
    assert result.diagnoses == []
    assert all(t.outcome == "passed" for t in result.tests)


@pytest.mark.parametrize("drill", PLAYABLE)
def test_starter_fails_as_not_started(runner, drill):
    result = runner.run(drill, "starter")
    assert result.status == r.FAILED, result.output
    assert result.diagnoses == [dx.NOT_STARTED]
    assert all(t.outcome == "failed" for t in result.tests)


@pytest.mark.parametrize(("drill", "path", "expected"), _mutants())
def test_mutant_gets_its_own_diagnosis_first(runner, drill, path, expected):
    result = runner.run(drill, str(path))
    if expected == "correct":
        assert result.status == r.PASSED, (result.diagnoses, result.output)
        return
    assert result.status in (r.FAILED, r.CRASHED), result.output
    assert result.diagnoses, result.output
    assert result.diagnoses[0] == expected, [
        (t.name, t.diagnosis, t.message) for t in result.tests if t.outcome == "failed"
    ]


@pytest.mark.parametrize("drill", PLAYABLE)
def test_every_seeded_mistake_has_mutants_and_a_hint_ladder(drill):
    ladders = yaml.safe_load(CATALOGUE.paths.hints(drill).read_text())["diagnoses"]
    for diagnosis in SEEDED[drill]:
        assert len(list((MUTANTS / drill).glob(f"{diagnosis}__*.py"))) >= 2, diagnosis
        stages = ladders[diagnosis]["stages"]
        assert len(stages) == 3, f"{drill}/{diagnosis} should have nudge, pointer and fix"
