"""The perf coach as a learner meets it: `tutor bench`'s verdict with the launch facts side by
side, and a hint ladder about the slowness, revealed stage by stage and kept in progress.

Bench reports are rebuilt from facts recorded on an H200 (tests/data/), since this machine has
no GPU: the bench process's JSON is judged as the bench process judges it, then read by the
tutor as `tutor bench` reads it.
"""

from __future__ import annotations

import copy

from cli_helpers import tutor
from recorded import entry, recorded_report

from tutor import bench
from tutor.coach.perf_hints import PerfCoach, fill_numbers
from tutor.course.catalogue import load_catalogue
from tutor.course.progress import ProgressStore
from tutor.lang import i18n


def _report(catalogue, drill: str, file: str) -> bench.BenchReport:
    """The BenchReport `tutor bench` would have made of a recorded bench."""
    return recorded_report(entry(drill, file), catalogue.paths.bench_recipe(drill))


def test_the_bench_text_shows_the_verdict_and_the_facts_side_by_side(catalogue):
    text = bench.format_report(_report(catalogue, "t2", "perf-spills__one_warp.patch"))
    assert "softmax m=4096 n=8192: spills" in text
    assert "208 bytes in local memory" in text  # the learner's own number
    facts = next(line for line in text.splitlines() if "registers / spills" in line)
    assert "255 / 52" in facts and "0" in facts.split("255 / 52")[1]  # yours, then the reference
    assert all(len(line) <= 100 for line in text.splitlines())


def test_the_facts_show_each_sides_dot_tiles_where_the_ir_gave_them(catalogue):
    recorded = copy.deepcopy(entry("m1", "perf-small-tiles__32x32.patch"))
    facts = recorded["report"]["rows"][0]["facts"]
    for side, tile in (("mine", [32, 32, 32]), ("reference", [128, 256, 64])):
        for launch in facts[side]["launches"]:
            launch["dot_tiles"] = [tile]
    text = bench.format_report(recorded_report(recorded, catalogue.paths.bench_recipe("m1")))
    row = next(line for line in text.splitlines() if "tl.dot tiles" in line)
    assert row.index("32x32x32") < row.index("128x256x64")  # yours, then the reference
    assert "multiplies 32x32 output tiles where the reference multiplies 128x256" in text
    # a kernel without tl.dot has no such row beside its other facts
    softmax = bench.format_report(_report(catalogue, "t2", "perf-spills__one_warp.patch"))
    assert "registers / spills" in softmax and "tl.dot tiles" not in softmax


def test_the_facts_table_names_what_limits_occupancy_in_the_learners_language(catalogue):
    report = _report(catalogue, "m1", "perf-small-tiles__32x32.patch")
    try:
        i18n.activate("zh")
        text = bench.format_report(report)
    finally:
        i18n.activate("en")
    row = next(line for line in text.splitlines() if "每个 SM 的 program 数" in line)
    assert "(寄存器)" in row and "registers" not in row


def test_a_reference_speed_kernel_is_at_the_reference(catalogue):
    text = bench.format_report(_report(catalogue, "t0", "solution"))
    assert "add n=67108864: at the reference's speed" in text


def test_the_perf_hint_is_revealed_stage_by_stage_and_kept(catalogue, tmp_path):
    store = ProgressStore(tmp_path / "progress.json")
    coach = PerfCoach(catalogue, store)
    view = coach.record_bench(
        _report(catalogue, "t3", "perf-too-few-programs__sixteen_programs.patch")
    )
    assert view.diagnosis == "too-few-programs" and len(view.stages) == 1
    assert "16 programs for 132 SMs" in view.stages[0] and "<" not in view.stages[0]
    coach.reveal_next("t3")
    last = coach.reveal_next("t3")
    assert len(last.stages) == 3 and last.exhausted
    again = PerfCoach(catalogue, ProgressStore(tmp_path / "progress.json")).current("t3")
    assert again.stages == last.stages  # what the CLI revealed, the app shows too


def test_a_bench_at_the_reference_clears_the_perf_hint(catalogue, tmp_path):
    store = ProgressStore(tmp_path / "progress.json")
    coach = PerfCoach(catalogue, store)
    coach.record_bench(_report(catalogue, "t0", "perf-small-blocks__block_64.patch"))
    assert coach.current("t0").diagnosis == "small-blocks"
    assert coach.record_bench(_report(catalogue, "t0", "solution")) is None
    assert store.drill("t0").perf_hints == {"small-blocks": 1}  # what was revealed stays


def test_tutor_hint_perf_reveals_the_next_stage(course):
    catalogue = load_catalogue(course)
    PerfCoach(catalogue, ProgressStore(course.progress_file)).record_bench(
        _report(catalogue, "m1", "perf-small-tiles__32x32.patch")
    )
    done = tutor(course, "hint", "m1", "--perf")
    assert done.returncode == 0, done.stderr
    assert "Perf hint — Output tiles too small" in done.stdout and "  2. " in done.stdout
    assert "does 32.0x less work" in done.stdout  # the learner's number (32 x 32 vs 128 x 256)


def test_numbers_fill_in_and_other_placeholders_are_left_alone():
    numbers = {"n_regs": 40, "ref_us": None}
    text = fill_numbers("<n_regs> registers (ref <ref_us> µs), see <drill>", numbers)
    assert text == "40 registers (ref ? µs), see <drill>"


def test_the_words_among_the_numbers_are_shown_in_the_learners_language():
    numbers = {"limiter": "registers", "yardstick": "the reference", "kernel": "_k"}
    text = "<kernel>: limited by <limiter>, against <yardstick>"
    assert fill_numbers(text, numbers) == "_k: limited by registers, against the reference"
    try:
        i18n.activate("zh")
        assert fill_numbers(text, numbers) == "_k: limited by 寄存器, against 参考解"
    finally:
        i18n.activate("en")
