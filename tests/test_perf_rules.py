"""The perf coach's rules, as pure functions of facts recorded on an H200.

tests/data/perf-facts-*.json hold what `python -m lab.perf_facts` measured on the
GPU for every drill's reference solution and every slow but correct kernel in
drills/mutants/*/perf-*: each file's launches (registers, spills, shared memory, warps, grid,
tensor cores), the kernels the profiler saw, and the times. The rules must give each slow
kernel its diagnosis first and the references none, from those facts alone; taking away the
evidence a diagnosis rests on must take the diagnosis away.
"""

from __future__ import annotations

import copy
import re

import pytest
from recorded import RECORDED, ROOT, recorded_record

from tutor.bench import rules
from tutor.bench.coach import coach_rows
from tutor.bench.occupancy import BLOCKS, REGISTERS, SHARED, WARPS, occupancy
from tutor.bench.recipe import load_recipes
from tutor.bench.record import BenchRecord, BenchRow
from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.lang import i18n

BENCHES = RECORDED["benches"]
H200 = BENCHES[0]["report"]["limits"]
CATALOGUE = load_catalogue(CoursePaths(ROOT))


def _levers(drill: str) -> dict:
    recipes = load_recipes(CATALOGUE.paths.bench_recipe(drill))
    return {name: recipe.levers for name, recipe in recipes.items()}


def _judged(record: BenchRecord) -> BenchRow:
    """The first case of a recorded bench, judged as the bench process judges it."""
    record = copy.deepcopy(record)
    coach_rows(record, _levers(record.drill))
    return record.rows[0]


@pytest.mark.parametrize("entry", BENCHES, ids=[f"{e['drill']}/{e['file']}" for e in BENCHES])
def test_recorded_facts_get_their_perf_diagnosis(entry):
    row = _judged(recorded_record(entry))
    named = [finding["id"] for finding in row.perf]
    if entry["expected"] == "none":
        assert named in ([], ["slower"]), row.perf  # slower names no cause
    else:
        assert named and named[0] == entry["expected"], row.perf
        assert row.perf[0]["text"]  # a sentence with the learner's numbers


_CJK = re.compile(r"[\u4e00-\u9fff]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@pytest.mark.parametrize("entry", BENCHES, ids=[f"{e['drill']}/{e['file']}" for e in BENCHES])
def test_a_finding_in_chinese_has_the_same_id_and_numbers(entry):
    english = _judged(recorded_record(entry)).perf
    try:
        i18n.activate("zh")
        chinese = _judged(recorded_record(entry)).perf
    finally:
        i18n.activate("en")
    assert [f["id"] for f in chinese] == [f["id"] for f in english]
    assert [f["numbers"] for f in chinese] == [f["numbers"] for f in english]  # --json's
    for en, zh in zip(english, chinese, strict=True):
        if en["id"] in rules.PERF_IDS or en["id"] == rules.SLOWER_ID:  # a drill's lever: its own
            assert _CJK.search(zh["text"]), zh["text"]
            assert sorted(_NUMBER.findall(zh["text"])) == sorted(_NUMBER.findall(en["text"]))


def test_every_shared_perf_diagnosis_is_recorded_twice():
    counts = {perf_id: 0 for perf_id in rules.PERF_IDS}
    for entry in BENCHES:
        if entry["expected"] in counts:
            counts[entry["expected"]] += 1
    assert all(count >= 2 for count in counts.values()), counts


def _record(file: str) -> BenchRecord:
    """The recorded bench of `file`, a copy to change before it is judged."""
    return recorded_record(next(e for e in BENCHES if e["file"] == file))


def _first(record: BenchRecord) -> str | None:
    row = _judged(record)
    return row.perf[0]["id"] if row.perf else None


def test_without_spilled_registers_there_is_no_spills_claim():
    record = _record("perf-spills__one_warp.patch")
    for launch in record.rows[0].facts["mine"]["launches"]:
        launch["n_spills"] = 0
    assert _first(record) != "spills"


def test_tensor_cores_in_the_ptx_take_the_claim_away():
    record = recorded_record(
        next(e for e in BENCHES if e["drill"] == "m1" and "fp32_fma" in e["file"])
    )
    for launch in record.rows[0].facts["mine"]["launches"]:
        launch["tensor_cores"] = True
    assert _first(record) != "no-tensor-cores"


@pytest.mark.parametrize("file", ["perf-small-tiles__32x32.patch", "perf-small-tiles__32x64.patch"])
def test_small_tiles_are_not_counted_against_a_grid_of_one_program_per_sm(file):
    # Without the tiles read from the IR (facts recorded before `dot_tiles`), the rule counts
    # programs. A persistent reference launches one program per SM, each walking several
    # tiles: its program count says nothing of its tile size ("16384 tiles where the
    # reference uses 132").
    record = _record(file)
    row = record.rows[0]
    for side in ("mine", "reference"):
        for launch in row.facts[side]["launches"]:
            launch.pop("dot_tiles", None)
    assert _first(record) == "small-tiles"
    for launch in row.facts["reference"]["launches"]:
        launch["programs"] = record.limits["sms"]
    assert _first(record) != "small-tiles"


def _with_dot_tiles(record: BenchRecord, mine: list[int], reference: list[int]) -> BenchRecord:
    facts = record.rows[0].facts
    for side, tile in (("mine", mine), ("reference", reference)):
        for launch in facts[side]["launches"]:
            launch["dot_tiles"] = [tile]
    return record


def test_small_tiles_read_from_the_ir_hold_against_a_persistent_reference():
    # With the tiles each tl.dot multiplies (tutor.bench.facts.dot_tiles, recorded on the
    # H100), a reference of one program per SM no longer hides how small the learner's tiles are.
    record = _record("perf-small-tiles__32x32.patch")
    facts = record.rows[0].facts
    assert [launch["dot_tiles"] for launch in facts["mine"]["launches"]] == [[[32, 32, 32]]]
    assert [launch["dot_tiles"] for launch in facts["reference"]["launches"]] == [[[128, 256, 64]]]
    for launch in facts["reference"]["launches"]:
        launch["programs"] = record.limits["sms"]
    finding = _judged(record).perf[0]
    assert finding["id"] == "small-tiles"
    numbers = finding["numbers"]
    assert (numbers["tile"], numbers["ref_tile"]) == ("32x32", "128x256")
    assert numbers["tile_ratio"] == 32.0 and numbers["load_ratio"] == 5.3
    assert "32x32" in finding["text"] and "128x256" in finding["text"]


def test_a_persistent_kernel_of_small_tiles_is_named_from_its_ir():
    # One program per SM looks like huge tiles to a count of programs; the IR says 32x32.
    record = _with_dot_tiles(_record("perf-small-tiles__32x32.patch"), [32, 32, 32], [128, 256, 64])
    for launch in record.rows[0].facts["mine"]["launches"]:
        launch["programs"] = record.limits["sms"]
    assert _first(record) == "small-tiles"


def test_tiles_as_large_as_the_reference_are_not_small_however_many_programs():
    # A kernel that splits K, or walks no tiles at all per program, still multiplies big tiles.
    record = _with_dot_tiles(
        _record("perf-small-tiles__32x32.patch"), [128, 128, 64], [128, 256, 64]
    )
    assert _first(record) != "small-tiles"


def test_a_host_that_keeps_up_is_not_host_bound():
    record = _record("perf-host-bound__chunk_launches.patch")
    mine = record.rows[0].times.mine
    mine.per_call_us = mine.graph_us * 1.05
    assert _first(record) != "host-bound"


def test_a_kernel_as_fast_as_the_reference_gets_no_diagnosis():
    record = _record("perf-spills__one_block_rows.patch")
    times = record.rows[0].times
    times.mine.graph_us = times.reference.graph_us * 1.05
    judged = _judged(record)
    assert judged.perf == [] and judged.perf_verdict == rules.AT_REFERENCE


def test_a_causal_case_without_its_plain_twin_claims_no_skip():
    record = recorded_record(
        next(e for e in BENCHES if e["file"].startswith("perf-no-causal-skip"))
    )
    record.rows = record.rows[:1]  # the causal case alone
    assert _first(record) != "no-causal-skip"


def _drill_record(drill: str, file: str) -> BenchRecord:
    return recorded_record(next(e for e in BENCHES if e["drill"] == drill and e["file"] == file))


@pytest.mark.parametrize(
    "file", ["perf-second-read__forward_reread.py", "perf-second-read__three_passes.py"]
)
def test_a_second_read_is_claimed_only_where_the_reference_reads_once(file):
    record = _drill_record("t4", file)
    assert _first(record) == "second-read"
    times = record.rows[0].times  # 4096 x 8192: the reference reads each row once
    times.reference.graph_us = times.mine.graph_us / 1.2  # as if it read twice too
    assert _first(record) != "second-read"


def test_a_second_walk_that_finds_the_row_in_the_l2_is_not_named():
    """The same kernel that was 1.31x on the H200 (recorded under its old name above) was
    1.15x on an H100, whose L2 still held each row for the second walk: no cause is claimed."""
    record = _drill_record("t4", "correct__walks_rows_twice.py")
    assert "H100" in record.device
    assert _first(record) is None


def test_a_second_read_defers_to_spills_in_the_compile_facts():
    record = _drill_record("t4", "perf-second-read__three_passes.py")
    for launch in record.rows[0].facts["mine"]["launches"]:
        launch["n_spills"] = 40
    assert _first(record) == "spills"


def test_the_second_read_quotes_the_long_row_where_the_reference_reads_twice():
    text = _judged(_drill_record("t4", "perf-second-read__forward_reread.py")).perf[0]["text"]
    assert "65536" in text and "8192" in text


@pytest.mark.parametrize(
    "file", ["perf-exp2__natural_exp.patch", "perf-exp2__scaled_inside_exp.patch"]
)
def test_exp2_rests_on_the_denormal_exponentials_in_the_ptx(file):
    record = _drill_record("m3", file)
    assert _first(record) == "exp2"
    mine = record.rows[0].facts["mine"]["launches"]
    assert all(launch["exp_denormal"] == launch["exp_ops"] > 0 for launch in mine)
    for launch in mine:
        launch["exp_denormal"] = 0  # every exponential an exp2
    assert _first(record) != "exp2"


def test_exp2_is_not_claimed_when_the_yardstick_uses_tl_exp_too():
    record = _drill_record("m3", "perf-exp2__natural_exp.patch")
    for launch in record.rows[0].facts["reference"]["launches"]:
        launch["exp_denormal"] = launch["exp_ops"]
    assert _first(record) != "exp2"


# ---- occupancy and waves -----------------------------------------------------------------------


def _launch(**facts) -> dict:
    return {"n_regs": 32, "num_warps": 4, "shared": 0, "programs": 1000, **facts}


def test_140_programs_on_132_sms_is_two_waves_the_second_six_percent_full():
    fit = occupancy(_launch(programs=140, n_regs=255, num_warps=8), H200)
    assert fit.programs_per_sm == 1 and fit.limiter == REGISTERS
    assert fit.full_waves == 1 and fit.last_wave_fill == pytest.approx(8 / 132, abs=1e-3)


def test_registers_are_counted_per_warp_in_units_of_256():
    # 33 registers a thread round up to 1280 a warp (not 1056): 65536 / (1280 * 8) = 6 programs
    fit = occupancy(_launch(n_regs=33, num_warps=8), H200)
    assert fit.programs_per_sm == 6 and fit.limiter == REGISTERS


def test_each_limit_is_named_when_it_binds():
    assert occupancy(_launch(n_regs=16, num_warps=32), H200).limiter == WARPS  # 64 warps / 32
    assert occupancy(_launch(num_warps=1), H200).limiter == BLOCKS  # 32 blocks an SM
    big = occupancy(_launch(shared=100 * 1024), H200)
    assert big.limiter == SHARED and big.programs_per_sm == 2  # 228 KB / (100 KB + 1 KB)


def test_a_persistent_grid_holds_only_its_own_warps():
    fit = occupancy(_launch(programs=132, num_warps=4), H200)
    assert fit.programs_per_sm == 16 and fit.resident_warps == 4


def test_missing_facts_give_no_fit():
    assert occupancy({"num_warps": 4, "programs": 10}, H200) is None
