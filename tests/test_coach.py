"""The hint engine: stage 1 by itself on a new diagnosis, later stages one request at a time."""

from __future__ import annotations

from tutor.coach.run_hints import Coach
from tutor.course import progress as p
from tutor.course.catalogue import load_catalogue
from tutor.course.hints import HintBook
from tutor.run.results import RunResult, TestResult
from tutor.states import DrillStatus, RunStatus


def _run(status, diagnoses=()):
    tests = [
        TestResult("t::a", "passed"),
        TestResult(
            "t::b",
            "failed" if diagnoses else "passed",
            diagnosis=diagnoses[0] if diagnoses else None,
        ),
    ]
    return RunResult("t3", "mine.py", status, tests=tests, diagnoses=list(diagnoses))


def _coach(course):
    return Coach(load_catalogue(course), p.ProgressStore(course.progress_file))


def test_first_failure_reveals_only_the_first_stage(course):
    coach = _coach(course)
    view = coach.record_run(_run(RunStatus.FAILED, ["padding-where", "mismatch"]))
    assert view.diagnosis == "padding-where"
    assert len(view.stages) == 1 and not view.exhausted
    book = HintBook(course.hints_dir, "t3")
    assert view.stages[0] == book.ladder("padding-where").stages[0]
    # Failing again with the same mistake does not reveal more by itself.
    assert len(coach.record_run(_run(RunStatus.FAILED, ["padding-where"])).stages) == 1


def test_next_stage_on_request_until_exhausted_then_solution_unlocks(course):
    coach = _coach(course)
    coach.record_run(_run(RunStatus.FAILED, ["padding-where"]))
    assert not coach.solution_unlocked("t3")
    total = len(HintBook(course.hints_dir, "t3").ladder("padding-where").stages)
    for shown in range(2, total + 1):
        view = coach.reveal_next("t3")
        assert len(view.stages) == shown
    assert view.exhausted and coach.reveal_next("t3").stages == view.stages
    assert coach.solution_unlocked("t3")


def test_reveals_are_remembered_across_processes(course):
    coach = _coach(course)
    coach.record_run(_run(RunStatus.FAILED, ["padding-where"]))
    coach.reveal_next("t3")
    assert len(_coach(course).current("t3").stages) == 2


def test_pass_records_whether_hints_were_used(course):
    coach = _coach(course)
    coach.record_run(_run(RunStatus.FAILED, ["unbiased-variance"]))
    assert coach.record_run(_run(RunStatus.PASSED)) is None
    state = p.ProgressStore(course.progress_file).drill("t3")
    assert (
        state.status == DrillStatus.PASSED and state.solved_with_hints is True and state.runs == 2
    )
    clean = _coach(course)
    clean.store.drill("t1")
    clean.record_run(RunResult("t1", "m.py", RunStatus.PASSED, tests=[TestResult("x", "passed")]))
    assert p.ProgressStore(course.progress_file).drill("t1").solved_with_hints is False


def test_unknown_diagnosis_falls_back_to_the_generic_ladder(course):
    book = HintBook(course.hints_dir, "t3")
    assert book.ladder("never-heard-of-it").diagnosis == "mismatch"


def test_the_not_started_ladder_never_opens_the_solution(course):
    coach = _coach(course)
    coach.record_run(_run(RunStatus.FAILED, ["not-started"]))
    total = len(HintBook(course.hints_dir, "t3").ladder("not-started").stages)
    for _ in range(total + 1):
        coach.reveal_next("t3")
    assert coach.current("t3").exhausted and not coach.solution_unlocked("t3")
    assert "<file>" not in " ".join(coach.current("t3").stages)
    assert "<drill>" not in " ".join(coach.current("t3").stages)


def test_a_pass_then_a_failure_is_solved_but_failing_and_reset_clears_the_run(course):
    coach = _coach(course)
    coach.record_run(_run(RunStatus.PASSED))
    coach.record_run(_run(RunStatus.FAILED, ["padding-where"]))
    state = p.ProgressStore(course.progress_file).drill("t3")
    assert state.status == DrillStatus.FAILING and state.solved and state.regressed
    assert coach.solution_unlocked("t3")  # passed once
    coach.forget_run("t3")
    state = p.ProgressStore(course.progress_file).drill("t3")
    assert state.last_run is None and state.status == DrillStatus.NOT_STARTED and state.solved


def test_stages_render_as_markdown_code_and_as_plain_text_from_one_source():
    from tutor.coach.report import stage_plain
    from tutor.course.hints import stage_blocks, stage_markdown

    stage = (
        "Load the padded lanes as -inf:\n\n    x = tl.load(p, mask=m,\n"
        "                other=float('-inf'))\n\nThen:\n# the sum\ns = tl.sum(x, axis=0)"
    )
    assert [kind for kind, _ in stage_blocks(stage)] == ["prose", "code", "prose", "code"]
    markdown = stage_markdown(stage)
    assert "```python\nx = tl.load(p, mask=m,\n            other=float('-inf'))\n```" in markdown
    assert "```python\n# the sum\ns = tl.sum(x, axis=0)\n```" in markdown
    plain = "\n".join(stage_plain(stage, "  "))
    assert "```" not in plain and "      # the sum\n      s = tl.sum(x, axis=0)" in plain
    prose = "q = qkv.view(T, 3, H, D)[:, 0] has strides (3*H*D, D, 1): tokens are\napart."
    assert [kind for kind, _ in stage_blocks(prose)] == ["prose"]
    # A Chinese stage that opens like code is prose; a Chinese comment keeps code code.
    chinese = "x = 20 时 tanh 已经饱和为 1，所以\n结果是 x 本身。"
    assert [kind for kind, _ in stage_blocks(chinese)] == ["prose"]
    commented = "y = tl.where(mask, x, 0.0)  # 填充位置为 0"
    assert [kind for kind, _ in stage_blocks(commented)] == ["code"]


def _failed_with(course, diagnosis, facts, drill="t0"):
    tests = [TestResult("t::a", "failed", diagnosis=diagnosis, facts=facts)]
    return RunResult(drill, "mine.py", RunStatus.FAILED, tests=tests, diagnoses=[diagnosis])


def test_a_stage_carries_the_runs_own_numbers_and_reads_well_without_them(course):
    coach = _coach(course)
    facts = {"wrong": 232, "total": 1000, "first": "768", "fill": "zeros", "pattern": "end"}
    view = coach.record_run(_failed_with(course, "grid-too-small", facts))
    assert "232 of 1000 values at its end (from index 768 on) read exactly 0" in view.stages[0]
    assert "<" not in view.stages[0]
    again = _coach(course).current("t0")  # the numbers are kept with the run, for `tutor hint`
    assert again.stages == view.stages
    bare = coach.record_run(_failed_with(course, "grid-too-small", {}))
    assert "some values at its end (from one position on) were never written" in bare.stages[0]


def test_nan_or_inf_counts_the_values_that_are_nan_or_inf_not_all_the_wrong_ones(course):
    """rstd = rsqrt(var) + eps: 4 values wrong, 1 of them inf; the hint says 1, not 4."""
    facts = {"wrong": 4, "nonfinite": 1, "total": 4, "first": "2", "pattern": "nan"}
    view = _coach(course).record_run(_failed_with(course, "nan-or-inf", facts))
    assert view.stages[0].startswith("1 of 4 values are NaN or inf")


def test_a_generic_ladder_follows_where_the_output_is_wrong(course):
    """mismatch: only the end -> the grid and the last mask; whole rows -> strides; off by one
    factor -> a constant or a scale; NaN rows -> padding and masks; else the formula."""
    coach = _coach(course)
    book = HintBook(course.hints_dir, "t0")
    ladder = book.ladder("mismatch")
    told = {}
    for pattern in ("end", "rows", "factor", "nan", ""):
        facts = {"wrong": 6, "total": 1200, "rows": 8, "wrong_rows": 2, "first": "[2, 0]"}
        facts.update({"pattern": pattern, "factor": "x0.5"} if pattern else {})
        coach.record_run(_failed_with(course, "mismatch", facts))
        for _ in range(2):
            coach.reveal_next("t0")
        told[pattern] = coach.current("t0").stages
        assert len(told[pattern]) == len(ladder.stages) == 3
    assert "cdiv" in told["end"][2] and "last" in told["end"][0]
    assert "stride" in told["rows"][1] and "2 of 8 rows" in told["rows"][0]
    assert "(x0.5)" in told["factor"][0] and "divisor" in told["factor"][0]
    assert "padding" in told["nan"][1] and "6 of 1200 values" in told["nan"][0]
    assert "by hand from the formula" in told[""][1]
    assert len({stages for stages in told.values()}) == 5


def test_code_in_a_last_stage_says_it_uses_the_references_names(course):
    from tutor.course.hints import REFERENCE_NAMES

    book = HintBook(course.hints_dir, "t2")
    assert book.ladder("padding-neg-inf").stages[-1].endswith(REFERENCE_NAMES)
    assert book.ladder("mismatch").stages_for("end")[-1].endswith(REFERENCE_NAMES)
    assert not book.ladder("mismatch").stages[-1].endswith(REFERENCE_NAMES)  # prose only
    assert REFERENCE_NAMES not in book.ladder("padding-neg-inf").stages[0]


def test_placeholders_outside_the_list_and_code_in_angle_brackets_stay():
    from tutor.course.hints import fill

    filled = fill("<drill> in <file>: <count>", "t0", "t0_add.py", {})
    assert filled == "t0 in t0_add.py: some values"
    assert fill("if a<b> and <nope>", "t0", "f", {"wrong": 1}) == "if a<b> and <nope>"


def test_a_when_block_must_name_a_pattern_and_match_the_stages(tmp_path):
    import pytest

    from tutor.course.hints import HintFileError, drill_ladders

    def write(text):
        (tmp_path / "x.yaml").write_text(
            "format: 1\ndiagnoses:\n  m:\n    title: T\n    stages: [a, b, c]\n" + text
        )
        return drill_ladders(tmp_path, "x")

    assert write("    when:\n      end: [d, e, f]\n")["m"].stages_for("end") == ("d", "e", "f")
    with pytest.raises(HintFileError, match="unknown pattern 'tail'"):
        write("    when:\n      tail: [d, e, f]\n")
    with pytest.raises(HintFileError, match="'when: rows' needs 3 stages"):
        write("    when:\n      rows: [d, e]\n")
