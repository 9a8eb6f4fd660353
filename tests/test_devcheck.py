"""`tutor dev check` and `tutor dev new`: the course proves itself; a new drill is content only."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from cli_helpers import tutor

from tutor.course import diagnoses as dx
from tutor.course.catalogue import load_catalogue
from tutor.dev import check as devcheck
from tutor.dev import patches
from tutor.states import RunStatus

ROOT = Path(__file__).resolve().parents[1]


def test_a_patch_rebuilds_its_mutant_and_a_stale_one_says_where():
    old = "a = 1\nb = 2\nc = 3\nd = 4\n"
    new = "a = 1\nb = 20\nc = 3\nd = 4\n"
    patch = patches.make(old, new, "x.py", "b is off by a factor of ten")
    assert patches.apply(old, patch) == new
    assert patches.description(patch) == "b is off by a factor of ten"
    with pytest.raises(patches.PatchError, match=r"expects line 2 of the solution to be 'b = 2'"):
        patches.apply(old.replace("b = 2", "b = 3"), patch)


def test_a_patch_is_rebased_onto_a_solution_that_moved_elsewhere():
    old = '"""Doc."""\na = 1\nb = 2\nc = 3\n'
    patch = patches.make(old, old.replace("b = 2", "b = 20"), "x.py", "b ten times too big")
    moved = '"""Doc,\nnow longer."""\na = 1\nb = 2\nc = 4\n'  # two lines above, c changed
    rebased = patches.rebase(old, moved, patch, "x.py")
    assert patches.apply(moved, rebased) == moved.replace("b = 2", "b = 20")
    assert patches.description(rebased) == "b ten times too big"


def test_patches_move_onto_a_variant_that_keeps_the_solution_they_were_made_on():
    """The solution grew a fast path; the old one, with another docstring, is a correct
    variant now: a patch moved onto it rebuilds the same code as before."""
    old = '"""Doc."""\na = 1\nb = 2\n'
    patch = patches.make(old, old.replace("b = 2", "b = 20"), "x.py", "b ten times too big")
    variant = '"""A correct variant:\nthe old way."""\na = 1\nb = 2\n'
    moved = patches.onto(old, variant, patch, "correct__old_way.py")
    assert patches.base(moved) == "correct__old_way.py"
    assert patches.description(moved).splitlines()[0] == "b ten times too big"
    assert patches.apply(variant, moved) == variant.replace("b = 2", "b = 20")


def test_a_patch_whose_own_line_changed_is_not_rebased():
    old = "a = 1\nb = 2\n"
    patch = patches.make(old, "a = 1\nb = 20\n", "x.py")
    with pytest.raises(patches.PatchError, match="line 2 of the old base"):
        patches.rebase(old, "a = 1\nb = 3\n", patch, "x.py")


def test_every_patch_mutant_of_the_course_applies(catalogue):
    for drill in (d for d in catalogue.drills if not d.coming):
        for target in devcheck.targets(catalogue, drill):
            assert not target.stale, target.stale
            assert target.path.is_file(), target.label


def test_a_solution_that_moves_under_its_patch_is_reported(course):
    catalogue = load_catalogue(course)
    drill = catalogue.drill("t3")
    solution = course.solution(drill.file)
    solution.write_text(
        solution.read_text().replace(
            "var = tl.sum(xc * xc, axis=0) / n_cols", "var = tl.sum(xc * xc, axis=0) / (n_cols)"
        )
    )
    stale = [t for t in devcheck.targets(catalogue, drill) if t.stale]
    assert {t.name for t in stale} >= {"unbiased-variance__n-minus-1.patch"}
    assert all("no longer applies to the solution" in t.stale for t in stale)
    finding = devcheck.judge(stale[0], None)
    assert not finding.ok and "no longer applies" in finding.message


def test_a_patch_with_a_base_line_builds_on_that_correct_variant(course):
    # m3's single-loop mistakes are patches against correct__single_loop_exp.py, not the
    # solution: the built mutant is that file with one edit, and when that file changes under
    # the patch, the message names it.
    catalogue = load_catalogue(course)
    drill = catalogue.drill("m3")
    folder = course.mutants("m3")
    base = folder / "correct__single_loop_exp.py"
    patch = folder / "grid-too-small__heads_only.patch"
    assert patches.base(patch.read_text()) == base.name
    by_name = {t.name: t for t in devcheck.targets(catalogue, drill)}
    built = by_name[patch.name]
    assert not built.stale
    assert built.path.read_text() == base.read_text().replace(
        "_flash[(B * H, triton.cdiv(N, BM))](", "_flash[(H, triton.cdiv(N, BM))]("
    )
    base.write_text(base.read_text().replace("(B * H, triton.cdiv", "(H * B, triton.cdiv"))
    stale = {t.name: t for t in devcheck.targets(catalogue, drill)}[patch.name].stale
    assert stale.startswith(f"{patch.name} no longer applies to {base.name}: ")
    assert f"of {base.name} to be" in stale


@pytest.mark.parametrize(
    "named", ["../../solutions/m3_attention.py", "missing__nowhere.py", "torch-fallback__sdpa.py"]
)
def test_a_base_line_must_name_a_correct_variant_of_the_drill(course, named):
    # Outside the drill's folder, missing, or itself a mistake: the patch is reported, not built.
    catalogue = load_catalogue(course)
    patch = course.mutants("m3") / "grid-too-small__heads_only.patch"
    patch.write_text(
        patch.read_text().replace("base: correct__single_loop_exp.py", f"base: {named}")
    )
    target = {t.name: t for t in devcheck.targets(catalogue, catalogue.drill("m3"))}[patch.name]
    assert target.stale == (
        f"{patch.name} names base {named}, which is not a correct__<variant>.py file in "
        f"{patch.parent}"
    )


def test_a_whole_file_mutant_near_a_correct_variant_or_the_solution_is_refused(course):
    # A near-copy drifts from its original unseen: dev check names both files and asks for a
    # patch, from one line of code up to NEAR_COPY_LINES (m1's ptr-advance__a_by_block, a patch
    # since issue 56, written out whole again is seven). Comments and docstrings do not count; a
    # file in its own style passes.
    catalogue = load_catalogue(course)
    drill = catalogue.drill("t3")
    folder = course.mutants("t3")
    variant = (folder / "correct__compact-rsqrt.py").read_text()
    assert "var = tl.sum(diff * diff, axis=0) / N\n" in variant
    near = variant.replace(
        "var = tl.sum(diff * diff, axis=0) / N\n", "var = tl.sum(diff * diff, axis=0) / (N - 1)\n"
    ).replace('"""A correct T3', '"""# a new comment\nA mutant of T3')
    (folder / "unbiased-variance__compact-copy.py").write_text(near)
    solution = course.solution(drill.file).read_text()
    (folder / "stats-dtype__solution-copy.py").write_text(
        solution.replace(
            "mean = tl.sum(x, axis=0) / n_cols", "mean = tl.sum(x, axis=0) / n_cols  # !"
        ).replace(
            "tl.store(mean_ptr + row_idx, mean)",
            "tl.store(mean_ptr + row_idx, mean.to(tl.float16))",
        )
    )
    refused = {
        f.subject: f.message for f in devcheck.content_findings(catalogue, drill) if not f.ok
    }
    assert refused == {
        "unbiased-variance__compact-copy.py": (
            "unbiased-variance__compact-copy.py differs from correct__compact-rsqrt.py by 1 line "
            "of code: one idea, so keep it as unbiased-variance__compact-copy.patch made on "
            "correct__compact-rsqrt.py (tutor.dev.patches.make), its description saying "
            "`base: correct__compact-rsqrt.py`"
        ),
        "stats-dtype__solution-copy.py": (
            "stats-dtype__solution-copy.py differs from the solution t3_layernorm.py by 1 line "
            "of code: one idea, so keep it as stats-dtype__solution-copy.patch made on "
            "t3_layernorm.py (tutor.dev.patches.make)"
        ),
    }
    m1, m1_folder = catalogue.drill("m1"), course.mutants("m1")
    advance = (m1_folder / "ptr-advance__a_by_block.patch").read_text()
    assert patches.base(advance) == "correct__offsets_from_k0.py"
    base = (m1_folder / "correct__offsets_from_k0.py").read_text()
    (m1_folder / "ptr-advance__whole-copy.py").write_text(patches.apply(base, advance))
    assert [f.message for f in devcheck.content_findings(catalogue, m1) if not f.ok] == [
        "ptr-advance__whole-copy.py differs from correct__offsets_from_k0.py by 7 lines of code: "
        "one idea, so keep it as ptr-advance__whole-copy.patch made on "
        "correct__offsets_from_k0.py (tutor.dev.patches.make), its description saying "
        "`base: correct__offsets_from_k0.py`"
    ]


def test_code_lines_apart_counts_code_only():
    one = '"""Doc."""\n\nx = 1  # one\ny = f(x,\n      2)\n'
    assert patches.code_lines_apart(one, '"""Other doc."""\nx = 1\ny = f(x, 2)\n') == 0
    assert patches.code_lines_apart(one, "x = 2\ny = f(x, 2)\nz = 3\n") == 2
    assert patches.code_lines_apart(one, "def broken(:\n") is None


def test_judge_follows_the_file_name(catalogue):
    from tutor.run import results as r

    drill = catalogue.drill("t2")
    by_name = {t.name: t for t in devcheck.targets(catalogue, drill)}
    mutant = by_name["padding-neg-inf__other_zero.py"]
    named = r.RunResult("t2", "x", RunStatus.FAILED, diagnoses=["padding-neg-inf", "mismatch"])
    other = r.RunResult("t2", "x", RunStatus.FAILED, diagnoses=["mismatch", "padding-neg-inf"])
    assert devcheck.judge(mutant, named).ok
    assert not devcheck.judge(mutant, other).ok
    solution = by_name["solution"]
    assert devcheck.judge(solution, r.RunResult("t2", "x", RunStatus.PASSED)).ok
    assert not devcheck.judge(
        solution, r.RunResult("t2", "x", RunStatus.PASSED, diagnoses=["x"])
    ).ok
    starter = by_name["starter"]
    started = r.RunResult(
        "t2",
        "x",
        RunStatus.FAILED,
        diagnoses=["not-started"],
        tests=[r.TestResult("t::a", "failed", "not-started")],
    )
    assert devcheck.judge(starter, started).ok
    half = r.RunResult(
        "t2",
        "x",
        RunStatus.FAILED,
        diagnoses=["not-started"],
        tests=[r.TestResult("t::a", "failed"), r.TestResult("t::b", "passed")],
    )
    assert not devcheck.judge(starter, half).ok


def test_content_rules_name_what_is_missing(course):
    catalogue = load_catalogue(course)
    drill = catalogue.drill("t2")
    for mutant in course.mutants("t2").glob("padding-neg-inf__*"):
        if mutant.name != "padding-neg-inf__other_zero.py":
            mutant.unlink()
    hints = course.hints("t2")
    hints.write_text(hints.read_text() + "  made-up-id:\n    title: X\n    stages: [a, b, c]\n")
    broken = {f.subject: f.message for f in devcheck.content_findings(catalogue, drill) if not f.ok}
    assert broken["padding-neg-inf mutants"].startswith("1 known-buggy kernels (at least 2")
    assert "not declare in drills.yaml" in broken["made-up-id ladder"]


def test_dev_new_scaffolds_a_drill_that_is_content_only(course):
    before = {p: p.read_bytes() for p in (ROOT / "tutor").rglob("*.py")}
    out = tutor(
        course,
        "dev",
        "new",
        "t9",
        "--track",
        "T",
        "--title",
        "Clamp",
        "--functions",
        "clamp,clamp_",
    )
    assert out.returncode == 0, out.stderr
    for path in (
        "drills/starters/t9_clamp.py",
        "drills/solutions/t9_clamp.py",
        "drills/tests/test_t9_clamp.py",
        "drills/content/t9.md",
        "hints/t9.yaml",
        "drills/bench/t9.py",
        "drills/mutants/t9/README.md",
    ):
        assert (course.root / path).is_file(), path
        assert path in out.stdout
    assert not (course.root / "tutor").exists() and not (course.root / "tests").exists()
    assert before == {p: p.read_bytes() for p in (ROOT / "tutor").rglob("*.py")}
    drill = load_catalogue(course).drill("t9")
    assert drill.functions == ("clamp", "clamp_") and drill.mistake_ids == ("t9-mistake",)
    assert drill.torch_core == ()  # declared empty, for the author to fill in
    # English first: the new drill passes dev check without its Chinese files
    assert drill.translations == ("en",)
    catalogue = load_catalogue(course)
    assert not [f for f in devcheck.content_findings(catalogue, drill) if "(zh)" in f.subject]
    listing = tutor(course, "list")
    assert listing.returncode == 0 and "t9" in listing.stdout and "Clamp" in listing.stdout
    again = tutor(course, "dev", "new", "t9", "--track", "T", "--title", "X", "--functions", "f")
    assert again.returncode == 2 and "already" in again.stderr
    wrong_track = tutor(
        course, "dev", "new", "t8", "--track", "Z", "--title", "X", "--functions", "f"
    )
    assert wrong_track.returncode == 2 and "unknown track 'Z'" in wrong_track.stderr


def test_dev_new_scaffolds_a_cuda_drill_whose_starter_and_solution_run_on_the_cpu(course):
    """A CUDA C++ drill: a .cu of kernels, the host code that launches them, and tests with the
    deep check; its starter fails as not started and its solution passes, built for the CPU."""
    if not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("no C++ compiler here")
    out = tutor(
        course,
        "dev",
        "new",
        "c9",
        "--track",
        "M",
        "--title",
        "Scale",
        "--functions",
        "scale",
        "--language",
        "cuda",
    )
    assert out.returncode == 0, out.stderr
    for path in (
        "drills/starters/c9_scale.cu",
        "drills/solutions/c9_scale.cu",
        "drills/host/c9_scale.py",
        "drills/tests/test_c9_scale.py",
    ):
        assert (course.root / path).is_file(), path
    assert load_catalogue(course).drill("c9").language == "cuda"
    for impl, code, said in (("solutions", 0, "All tests pass"), ("starter", 1, "not-started")):
        run = tutor(course, "check", "c9", "--impl", impl, "--cpu")
        assert run.returncode == code and said in run.stdout, run.stdout + run.stderr
    wrong = tutor(
        course,
        "dev",
        "new",
        "c8",
        "--track",
        "M",
        "--title",
        "X",
        "--functions",
        "f",
        "--language",
        "fortran",
    )
    assert wrong.returncode == 2 and "triton, cuda" in wrong.stderr


def test_dev_check_fails_when_a_starter_stands_in_for_the_solution(course):
    drill = load_catalogue(course).drill("t1")
    shutil.copyfile(course.starter(drill.file), course.solution(drill.file))
    # One correct variant is enough to show it (and quicker than all nineteen files).
    for mutant in course.mutants(drill.id).iterdir():
        if mutant.name != "correct__sigmoid_product.py":
            mutant.unlink()
    out = tutor(course, "dev", "check", "t1", "--cpu", "--json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    failed = {f["subject"]: f["message"] for f in data["findings"] if not f["ok"]}
    assert failed["solution"].startswith("must give pass, gave not-started")
    # the correct variants are judged against the tests, not the solution
    assert "correct__sigmoid_product.py" not in failed


def test_the_same_buggy_file_gets_the_same_diagnoses_on_every_run(catalogue):
    """A grid too small leaves memory never written: it reads the same on every run."""
    from tutor.run.runner import Runner

    drill = catalogue.drill("t1")
    (target,) = [t for t in devcheck.targets(catalogue, drill) if t.name.startswith("grid-too")][:1]
    runner = Runner(catalogue, force_cpu=True)
    verdicts = [runner.run("t1", str(target.path)) for _ in range(3)]
    seen = {(tuple(r.diagnoses), tuple((t.id, t.diagnosis) for t in r.tests)) for r in verdicts}
    assert len(seen) == 1 and verdicts[0].diagnoses[0] == "grid-too-small"


def test_a_batch_gives_each_file_what_a_run_of_its_own_gives(catalogue, tmp_path):
    """On the CPU dev check runs a drill's files in one child (tutor.harness.batch): each test's
    outcome, diagnosis and words are those a run of the file alone gives. A file that ends the
    process, or runs past the time limit, leaves itself and the files after it to runs of their
    own, which name the crash and the hang. Each file's time is that of its own session."""
    from tutor.run.runner import Runner
    from tutor.run.warm import WarmPool

    work = devcheck.targets(catalogue, catalogue.drill("t0"))[:5]  # solution, starter, mutants
    exits, hangs = tmp_path / "exits.py", tmp_path / "hangs.py"
    exits.write_text("import os\n\nos._exit(3)\n")
    hangs.write_text("import time\n\n\ndef add(x, y):\n    while True:\n        time.sleep(0.05)\n")
    work.insert(3, devcheck.Target("t0", "exits.py", exits, dx.PROCESS_CRASHED))
    work.append(devcheck.Target("t0", "hangs.py", hangs, dx.KERNEL_HANG))
    pool = WarmPool(tmp_path / "warm", cpu=True)
    try:
        pool.ready.wait(timeout=120)  # else the runs go cold: slower, the same results
        # A time limit 30 times what one of these files takes on a quiet machine.
        runner = Runner(catalogue, force_cpu=True, warm=pool, timeout=5)
        started = time.monotonic()
        batch = runner.run_batch("t0", [str(t.path) for t in work])
        took = time.monotonic() - started
        assert list(batch) == [str(t.path) for t in work[:3]]  # the files before the exit
        # each file's time is its own session's: none is nothing, together no more than all
        assert all(run.duration > 0 for run in batch.values())
        assert sum(run.duration for run in batch.values()) <= took

        def seen(result):
            tests = [(t.id, t.outcome, t.diagnosis, t.message, t.where) for t in result.tests]
            return result.status, result.diagnoses, tests

        for target in work[:3]:
            assert seen(batch[str(target.path)]) == seen(runner.run("t0", str(target.path)))
        proven = [devcheck.judge(t, run) for t, run in devcheck.prove(runner, work, jobs=1)]
        assert [f.ok for f in proven] == [True] * len(work), [f.line() for f in proven]
    finally:
        pool.close()


def test_a_built_patch_mutant_is_written_whole_and_not_rewritten_when_unchanged(tmp_path):
    """Test workers build the same mutants at once: each file is replaced whole, and a file that
    already holds the text is left alone (a worker running it is never handed a half file)."""
    target = tmp_path / "m.py"
    devcheck._write_whole(target, "x = 1\n")
    first = target.stat().st_ino
    devcheck._write_whole(target, "x = 1\n")
    assert target.stat().st_ino == first  # unchanged: not written again
    devcheck._write_whole(target, "x = 2\n")
    assert target.read_text() == "x = 2\n" and target.stat().st_ino != first
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]  # no temporary file left
