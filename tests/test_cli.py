"""The `tutor` command, as a script would use it: output, JSON contract and exit codes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_helpers import padding_where_mutant
from cli_helpers import tutor as run_tutor

from tutor.cli import DEV_TOOLS

ROOT = Path(__file__).resolve().parents[1]


def tutor(course, *args, timeout=120):
    return run_tutor(course, *args, timeout=timeout, root_from_env=True)


def test_help_lists_the_commands(course):
    out = tutor(course, "--help")
    assert out.returncode == 0 and "check" in out.stdout and "dev" in out.stdout


@pytest.mark.parametrize("tool", sorted(DEV_TOOLS))
def test_every_dev_tool_answers_help(course, tool):
    # The one dev door hands the rest of the line to the tool: its --help must reach it.
    out = tutor(course, "dev", tool, "--help")
    assert out.returncode == 0, out.stderr
    assert f"tutor dev {tool}" in out.stdout and "Traceback" not in out.stderr


def test_a_dev_tool_gets_its_options_in_order(course, monkeypatch):
    import importlib

    from tutor import cli

    seen = {}

    class Tool:
        @staticmethod
        def main(argv):
            seen["argv"] = argv
            return 0

    monkeypatch.setattr(importlib, "import_module", lambda name: Tool)
    argv = ["--root", str(course.root), "dev", "report", "--drills", "c2,c4", "--budget", "250"]
    assert cli.main(argv) == 0
    assert seen["argv"] == ["--drills", "c2,c4", "--budget", "250"]


def test_check_solution_json_contract(course):
    out = tutor(course, "check", "t3", "--impl", "solutions", "--cpu", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["drill"] == "t3" and data["passed"] is True and data["status"] == "passed"
    assert data["backend"] == "cpu-interpreter"
    assert data["diagnoses"] == [] and data["hint"] is None
    assert data["tests"] and {"id", "outcome", "diagnosis", "message"} <= set(data["tests"][0])


def test_first_check_makes_the_learner_file_and_fails_as_not_started(course):
    out = tutor(course, "check", "t3", "--cpu", "--json")
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["diagnoses"] == ["not-started"]
    assert data["hint"]["diagnosis"] == "not-started" and len(data["hint"]["stages"]) == 1
    mine = course.mine("t3_layernorm.py")
    assert mine.read_text() == course.starter("t3_layernorm.py").read_text()


def test_text_report_hint_ladder_and_progress(course):
    mutant = padding_where_mutant(course)
    course.mine("t3_layernorm.py").parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mutant, course.mine("t3_layernorm.py"))
    out = tutor(course, "check", "t3", "--cpu")
    assert out.returncode == 1
    assert "✗ test_" in out.stdout and "(padding-where)" in out.stdout
    assert "1. " in out.stdout and "2. " not in out.stdout
    second = tutor(course, "hint", "t3")
    assert "2. " in second.stdout and "3. " not in second.stdout
    progress = json.loads(tutor(course, "progress", "--json").stdout)["drills"]["t3"]
    assert progress["status"] == "failing" and progress["runs"] == 1
    assert progress["hints"] == {"padding-where": 2} and progress["hints_revealed"] == 2
    assert "failing" in tutor(course, "progress").stdout
    assert tutor(course, "solution", "t3").returncode == 1  # not yet: no pass, hints left


def test_reset_restores_the_starter_and_keeps_a_backup(course):
    mine = course.mine("t3_layernorm.py")
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("# my work\n")
    out = tutor(course, "reset", "t3")
    assert out.returncode == 0
    assert mine.read_text() == course.starter("t3_layernorm.py").read_text()
    backups = list(course.backups.iterdir())
    assert len(backups) == 1 and backups[0].read_text() == "# my work\n"
    assert str(backups[0]) in out.stdout


@pytest.mark.parametrize("args", [("check", "zz"), ("hint", "nope"), ("reset", "q9")])
def test_unknown_drill_is_a_usage_error(course, args):
    out = tutor(course, *args)
    assert out.returncode == 2 and "no drill" in out.stderr


def test_broken_catalogue_is_reported_with_file_and_line(course):
    text = course.catalogue.read_text()
    course.catalogue.write_text(text.replace("    file: t3_layernorm.py\n", ""))
    out = tutor(course, "list")
    assert out.returncode == 2
    assert "drills.yaml:" in out.stderr and "drill 't3': missing key 'file'" in out.stderr


def test_corrupt_progress_file_warns_and_keeps_a_copy(course):
    course.state_dir.mkdir()
    course.progress_file.write_text("{not json")
    out = tutor(course, "progress")
    assert out.returncode == 0 and "warning:" in out.stderr and "moved to" in out.stderr
    assert list(course.state_dir.glob("progress.json.corrupt-*"))


def test_missing_file_under_test_is_a_setup_error_with_its_name(course, tmp_path):
    missing = tmp_path / "nope.py"
    out = tutor(course, "check", "t3", "--impl", str(missing), "--cpu")
    assert out.returncode == 2
    assert f"{missing} does not exist" in out.stdout and "(missing-file)" in out.stdout
    assert "tutor hint" not in out.stdout  # hints for other files are not remembered
    data = json.loads(tutor(course, "check", "t3", "--impl", str(missing), "--json").stdout)
    assert data["status"] == "setup-error" and data["diagnoses"] == ["missing-file"]


def test_drill_ids_are_case_insensitive(course):
    out = tutor(course, "lesson", "T1")
    assert out.returncode == 0, out.stderr
    assert tutor(course, "solution", "T1").returncode == 1  # locked, but found


def test_progress_keeps_solved_apart_from_the_last_run(course):
    from tutor.course.progress import ProgressStore

    store = ProgressStore(course.progress_file)
    state = store.drill("t1")
    state.status, state.solved_at, state.last_run = (
        "failing",
        "2026-01-01T00:00:00",
        {"status": "failed"},
    )
    store.save()
    out = tutor(course, "progress")
    assert "passed before, failing now" in out.stdout
    data = json.loads(tutor(course, "progress", "--json").stdout)["drills"]["t1"]
    assert data["solved"] is True and data["status"] == "failing"


def test_a_syntax_error_is_said_once_before_any_run(course):
    out = tutor(course, "check", "t3", "--impl", str(ROOT / "tests/fixtures/t3_syntax_error.py"))
    assert out.returncode == 1
    assert out.stdout.count("syntax error: '(' was never closed") == 1, out.stdout
    assert "0 passed, 1 failed" in out.stdout
    assert "found before any run: the file does not compile" in out.stdout


def test_check_without_a_drill_checks_the_one_in_progress_and_a_pass_offers_the_next(course):
    """As rustlings has a current exercise: `tutor check` alone checks the drill in progress,
    and after a pass names the next drill and how to take it up."""
    course.mine("t0_add.py").parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(course.solution("t0_add.py"), course.mine("t0_add.py"))
    first = tutor(course, "check", "--cpu")
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.startswith("Checking t0 (Vector add), the drill in progress.")
    assert "Next: t1 (GELU (tanh form)). Write it in drills/mine/t1_gelu.py" in first.stdout
    second = tutor(course, "check", "--cpu", "--json")
    assert second.returncode == 1
    assert json.loads(second.stdout)["drill"] == "t1"  # stdout is the one JSON object
    assert "Checking t1" in second.stderr


def _revealed(course, drill_id: str, diagnosis: str, stages: int) -> None:
    """The progress a failing run of `diagnosis` and `stages - 1` presses of `tutor hint` leave."""
    from tutor.course.progress import ProgressStore

    store = ProgressStore(course.progress_file)
    state = store.drill(drill_id)
    state.status, state.active_diagnosis = "failing", diagnosis
    state.last_run = {"status": "failed", "diagnoses": [diagnosis]}
    state.hints = {diagnosis: stages}
    store.save()


def test_a_code_only_hint_stage_prints_as_it_pastes(course):
    import textwrap

    _revealed(course, "t3", "padding-where", 2)  # hints/t3.yaml: its third stage is all code
    out = tutor(course, "hint", "t3")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("  3.")  # the number alone: the code starts under it, not beside it
    block = []
    for line in lines[start + 1 :]:
        if (line and not line.startswith(" " * 5)) or (not line and block):
            break  # the code ends at the stage's end, or at the blank line before its note
        block.append(line)
    code = textwrap.dedent("\n".join(block)).strip("\n")
    assert code.startswith("xc = tl.where(mask, x - mean, 0.0)")
    compile(code, "pasted", "exec")  # one indent throughout: pasted, it runs


def test_the_solution_refusal_states_the_rule(course):
    _revealed(course, "t3", "not-started", 3)  # every hint of the untouched starter is out
    out = tutor(course, "solution", "t3")
    assert out.returncode == 1
    assert "opens after your file passes, or once every hint for a mistake in your kernel" in (
        out.stdout
    )
    assert "the hints for an untouched starter do not open it" in out.stdout
    assert "after the last hint stage" not in out.stdout


def test_bf16_garbage_on_the_cpu_is_said_to_be_the_interpreters_and_its_map_fits(course, tmp_path):
    from tutor.dev import patches

    patch = (ROOT / "drills/mutants/t3/bf16-no-upcast__no-cast.patch").read_text()
    mutant = tmp_path / "t3_no_cast.py"
    mutant.write_text(patches.apply(course.solution("t3_layernorm.py").read_text(), patch))
    env = dict(os.environ, COLUMNS="60")
    out = run_tutor(course, "check", "t3", "--impl", str(mutant), "--cpu", env=env)
    assert out.returncode == 1 and "[bf16-no-upcast]" in out.stdout, out.stdout
    lines = out.stdout.splitlines()
    values = next(n for n, line in enumerate(lines) if "values differ" in line)
    assert "These values are the CPU interpreter's" in " ".join(lines[values : values + 4])
    cells = [line.strip() for line in lines if line.strip() and set(line.strip()) <= set(".X_N")]
    assert cells and all(len(line) <= 60 - 8 for line in cells)  # one row of the map a line


def test_list_puts_every_drills_status_in_one_column(course):
    out = tutor(course, "list")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("  [")]
    starts = {line.index("not started") for line in rows}
    assert len(rows) >= 20 and len(starts) == 1, out.stdout  # the longest title sets the column
