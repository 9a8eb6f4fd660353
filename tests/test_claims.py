"""Claims that say only what the outputs show, and hints that fit the way the mistake was
written: each class of wrong words learners met (issue 60), proven on the harness and hint code
itself. The drills' own classes are proven by their known-buggy kernels (tutor dev check)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tutor.coach.report import INTERPRETER_MADE_THESE, format_run, interpreter_note
from tutor.course import diagnoses as dx
from tutor.course.hints import (
    HintBook,
    HintFileError,
    drill_ladders,
    fill,
    fitted,
    stage_blocks,
)
from tutor.dev.check import Target, way_without_stages
from tutor.harness import allocations, errormap, learner
from tutor.harness.checks import Suspect, Tolerance, describe_mismatch, expect_close
from tutor.harness.failures import DrillFailure
from tutor.lang.mapwords import share
from tutor.run.results import BACKEND_NOTE, ONE_STEP, RunResult, TestResult
from tutor.states import BackendName, Outcome, RunStatus

TOL = Tolerance(atol=1e-5, rtol=1e-5)


def _diagnosis(actual, expected, **kwargs) -> DrillFailure:
    with pytest.raises(DrillFailure) as caught:
        expect_close(actual, expected, what="y", tol=TOL, **kwargs)
    return caught.value


def _hints(tmp_path: Path, common: str, drill: str = "") -> Path:
    hints = tmp_path / "hints"
    hints.mkdir(exist_ok=True)
    (hints / "common.yaml").write_text("format: 1\ndiagnoses:\n" + common)
    if drill:
        (hints / "d1.yaml").write_text("format: 1\ndiagnoses:\n" + drill)
    return hints


LADDER = """\
  row-stride:
    title: Rows assumed
    stages: [plain one, plain two, plain three]
    ways:
      allocated: [alloc one, alloc two, alloc three]
"""


# -- ladders by the way a mistake was written ---------------------------------------------------


def test_a_way_the_run_told_picks_its_own_stages_before_a_pattern(tmp_path):
    ladder = HintBook(_hints(tmp_path, LADDER), "d1").ladder("row-stride")
    assert ladder.stages_for(None, "allocated")[0] == "alloc one"
    assert ladder.stages_for("end", "allocated")[0] == "alloc one"
    assert ladder.stages_for(None, "unknown-way")[0] == "plain one"


def test_a_drills_own_ladder_keeps_the_common_ways_it_does_not_tell(tmp_path):
    """t2's row-stride ladder speaks of x and y; a stride mistake in a tensor the learner
    allocated reads the same in every drill, so it keeps the common stages for that way."""
    own = "  row-stride:\n    title: Own\n    stages: [own one, own two, own three]\n"
    ladder = HintBook(_hints(tmp_path, LADDER, own), "d1").ladder("row-stride")
    assert ladder.stages_for(None)[0] == "own one"
    assert ladder.stages_for(None, "allocated")[0] == "alloc one"


@pytest.mark.parametrize(
    ("ways", "said"),
    [
        ("      Bad_Name: [a, b, c]\n", "lower-case words"),
        ("      allocated: [a, b]\n", "needs 3 stages"),
    ],
)
def test_a_malformed_way_names_the_file(tmp_path, ways, said):
    text = "  m:\n    title: T\n    stages: [a, b, c]\n    ways:\n" + ways
    with pytest.raises(HintFileError, match=said):
        drill_ladders(_hints(tmp_path, text), "common")


def test_dev_check_wants_stages_for_every_way_a_known_buggy_kernel_is_told(tmp_path):
    """A mutant whose run says how its mistake was written, where the ladder has no stages for
    that way, would be hinted about another way of writing it: dev check says so."""
    from tutor.course.catalogue import Catalogue

    class Paths:
        hints_dir = _hints(tmp_path, LADDER)

    catalogue = Catalogue((), (), Paths())

    def run(way: str) -> RunResult:
        test = TestResult(
            "t::a", Outcome.FAILED, "row-stride", "m", facts={"way": way} if way else {}
        )
        return RunResult("d1", "x.py", RunStatus.FAILED, tests=[test], diagnoses=["row-stride"])

    target = Target("d1", "row-stride__x.py", Path("x.py"), "row-stride")
    assert way_without_stages(catalogue, target, run("allocated")) is None
    assert way_without_stages(catalogue, target, run("")) is None
    finding = way_without_stages(catalogue, target, run("strides"))
    assert finding is not None and not finding.ok and "strides" in finding.message


def test_a_suspect_carries_its_way_into_the_failure():
    want = torch.linspace(1.0, 2.0, 64)
    got = -want
    suspect = Suspect("rope-sign", got.clone(), "one half flipped", way="one-half")
    failure = _diagnosis(got, want, suspects=[suspect])
    assert failure.diagnosis == "rope-sign" and failure.facts["way"] == "one-half"


def test_placeholders_name_the_tensor_and_its_layout():
    facts = {"tensor": "lse_a", "shape": "[4, 100]", "stride": 100, "stored": 128}
    text = "<tensor>_ptr + r * <tensor>_row_stride; <shape>: rows <stride>, stored <stored>"
    assert fill(text, "d1", "f.py", facts) == (
        "lse_a_ptr + r * lse_a_row_stride; shape [4, 100]: rows 100 elements apart, "
        "stored 128 elements apart"
    )
    assert fill("<tensor>_ptr", "d1", "f.py", {}) == "x_ptr"  # the run did not say: x


# -- code stages --------------------------------------------------------------------------------


def test_a_code_stage_whose_first_line_continues_a_call_is_code_whole():
    """`y = tl.load(..., mask=mask,` ends in ',' like a clause of prose, but the bracket it
    opened is still open: the stage is code from its first line (b1, t2, t4 printed it
    broken), while prose that ends a clause in ',' stays prose."""
    stage = (
        "y = tl.load(y_ptr + offsets, mask=mask,\n"
        "            other=0.0).to(tl.float32)\n"
        "dot = tl.sum(dy * y, axis=0)"
    )
    assert [kind for kind, _ in stage_blocks(stage)] == ["code"]
    assert stage_blocks("Load y as before,\nthen sum it.")[0][0] == "prose"


@pytest.mark.parametrize(
    "stage",
    [
        "const float rstd = rsqrtf(block_sum(sum_sq) / n_cols + eps);",
        "__shared__ float warp_sums[WARP];  // one slot per warp: at most 1024 threads",
        "if (lane == 0) warp_sums[warp] = value;  // 只有 lane 0 写……\n__syncthreads();",
        "tile[r][tx] = x[row * x_row_stride + col];  // 读入：x 的一行成为 tile 的一行",
        "const __nv_bfloat16* x_row = x + blockIdx.x * x_row_stride;",
        "__device__ float warp_sum(float value) {\n  return value;\n}",
        "x[row * x_row_stride + col]              // x 的行步长，x 的行",
        "// first and stride in size_t\nfor (size_t i = first; i < (size_t)n; i += stride)",
    ],
)
def test_a_cuda_stage_is_code_whatever_language_its_comments_are_in(stage):
    """C++ declarations, statements and `//` comments (English or Chinese) are code: the C
    drills' stage-3 fixes printed as wrapped prose, their lines run together."""
    assert [kind for kind, _ in stage_blocks(stage)] == ["code"]


@pytest.mark.parametrize(
    "prose",
    [
        "At x = 20, z = 0.7979 * (20 + 0.044715 * 8000) = 301, and float32",
        "range(0, n_cols // BLOCK_SIZE) counts only the full blocks: N = 5 in",
        "__syncthreads waits until every thread of the block arrives.",
    ],
)
def test_prose_with_an_equals_sign_or_a_floor_division_stays_prose(prose):
    assert stage_blocks(prose)[0][0] == "prose"


def test_no_c_drill_stage_prints_a_cpp_statement_as_prose():
    """In every C drill's ladders, in both languages, a line that ends a C++ statement or opens
    a block (`;`, `{`) is in a code block, never wrapped into prose."""
    import yaml

    root = Path(__file__).resolve().parents[1]
    for path in sorted((root / "hints").glob("c[0-9].*yaml")):
        for name, ladder in yaml.safe_load(path.read_text())["diagnoses"].items():
            stages = list(ladder["stages"])
            for more in (ladder.get("ways") or {}).values():
                stages += list(more)
            for stage in map(str, stages):
                prose = [t for kind, t in stage_blocks(stage) if kind == "prose"]
                cpp = [
                    ln for t in prose for ln in t.splitlines() if ln.rstrip().endswith((";", "{"))
                ]
                assert not cpp, f"{path.name} {name}: {cpp[0]}"


def test_after_axis_0_code_a_kernel_of_several_rows_a_program_hears_about_tiles():
    stage = "dot = tl.sum(dy * y, axis=0)"
    assert fitted(stage, {"rows_per_program": 4}).startswith(stage + "\n\n")
    assert "axis=1" in fitted(stage, {"rows_per_program": 4})
    assert fitted(stage, {"rows_per_program": 1}) == stage
    assert fitted("No code here, axis=0 in prose.", {"rows_per_program": 4}).endswith("prose.")


def test_a_failure_says_how_many_rows_each_program_took(tmp_path, monkeypatch):
    monkeypatch.setattr(learner, "last_call", learner.last_call)
    monkeypatch.setattr(learner, "_returned", {})
    path = tmp_path / "mine.py"
    path.write_text(
        "import torch\n"
        "from tutor.kernels import launches\n"
        "def four_rows_a_program(x):\n"
        "    launches.record(launches.Launch((2,), (128,)))\n"
        "    return x * 2\n"
    )
    module = learner.load(path, ("four_rows_a_program",))
    x = torch.ones(8, 100)
    assert _diagnosis(module.four_rows_a_program(x), x).facts["rows_per_program"] == 4


# -- the error map's words ----------------------------------------------------------------------


def test_only_the_end_is_a_contiguous_tail():
    """A right value inside the stretch is no end stopping short (92.8% wrong read as 'only
    the end' because the first value was right)."""
    tail = torch.zeros(100, dtype=torch.bool)
    tail[60:] = True
    assert errormap.locate(tail).facts["pattern"] == "end"
    holes = tail.clone()
    holes[1:] = True
    holes[50] = False
    assert errormap.locate(holes).facts["pattern"] != "end"


def test_a_share_never_reads_as_none_or_as_all():
    assert share(4, 10_000) == "<0.1"
    assert share(9_999, 10_000) == ">99.9"
    assert share(0, 10) == "0.0" and share(10, 10) == "100.0" and share(1, 4) == "25.0"
    assert "(<0.1%)" in errormap.locate(torch.arange(10_000) < 4).where


def test_a_single_value_output_gets_a_sentence_not_a_map():
    failure = _diagnosis(torch.tensor(2.5), torch.tensor(2.0))
    assert failure.message == ("y is one value: got 2.5, expected 2 (|diff| 0.5, allowed 3e-05)")
    assert failure.error_map == () and failure.where == ""
    assert "worst at []" not in describe_mismatch(torch.tensor(1.0), torch.tensor(0.0), TOL, "loss")


# -- torch beside a kernel ----------------------------------------------------------------------


def test_a_copy_flagged_as_the_drills_work_is_not_called_fine(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "from tutor.kernels import launches\n"
        "def transpose(x):\n"
        "    launches.record(launches.Launch((1,), (16,)))\n"
        "    return x.t().contiguous()\n"
        "def scaled(x):\n"
        "    launches.record(launches.Launch((1,), (16,)))\n"
        "    return x.softmax(-1)\n"
    )
    copying = learner.load(path, ("transpose",), ("contiguous", "clone", "copy"))
    with pytest.raises(DrillFailure) as caught:
        copying.transpose(torch.ones(3, 2))
    assert caught.value.facts["way"] == "beside-kernel"
    assert "(allocating and views in torch are fine)" in caught.value.details
    computing = learner.load(path, ("scaled",), ("softmax",))
    with pytest.raises(DrillFailure) as caught:
        computing.scaled(torch.ones(3, 2))
    assert "(allocating, views and copies in torch are fine)" in caught.value.details


def test_the_common_torch_fallback_ladder_speaks_of_the_kernel_beside_torch():
    book = HintBook(Path(__file__).resolve().parents[1] / "hints", "t5")
    ladder = book.ladder(dx.TORCH_FALLBACK)
    assert "Where is the launch?" in ladder.stages_for(None)[0]
    beside = ladder.stages_for(None, "beside-kernel")
    assert "Your kernel ran" in beside[0] and "launch" not in beside[0].lower()


# -- memory the learner allocated ---------------------------------------------------------------


def test_rows_stored_with_another_stride_are_told_for_the_buffer_they_went_into():
    with allocations.GuardedAllocations() as fence:
        partial = torch.empty((4, 100))
    flat = fence.buffers[0][0]
    for program in range(4):  # each program stores its row 128 apart, as BLOCK_N
        start = allocations.GUARD + program * 128
        flat[start : start + 100] = 1.0
    with pytest.raises(DrillFailure) as caught:
        fence.check("f")
    assert caught.value.diagnosis == dx.ROW_STRIDE
    assert caught.value.facts == {
        "way": "allocated",
        "shape": "[4, 100]",
        "stride": 100,
        "stored": 128,
    }
    assert partial.shape == (4, 100)


def test_empty_memory_can_start_as_zeros_for_a_rerun():
    with allocations.GuardedAllocations():
        sentinel = torch.empty(8)
    with allocations.empty_as_zeros(), allocations.GuardedAllocations() as fence:
        zeros = torch.empty(8)
    assert bool((sentinel == allocations.SENTINEL).all()) and not zeros.any()
    assert bool((fence.buffers[0][0][:4] == allocations.SENTINEL).all())  # guards kept


# -- what the bf16 backend note says, and how often ----------------------------------------------


def test_a_bf16_result_one_step_off_is_no_garbage():
    want = torch.linspace(1.0, 2.0, 64).bfloat16()
    got = want.clone()
    got[::4] = (got[::4].view(torch.int16) + 1).view(torch.bfloat16)  # one step up
    tight = Tolerance(atol=0.0, rtol=0.0)
    with pytest.raises(DrillFailure) as caught:
        expect_close(
            got,
            want,
            what="y",
            tol=tight,
            fp32_rerun=lambda: want.float(),
            fp32_expected=want.float(),
        )
    failure = caught.value
    assert failure.diagnosis == dx.BF16_NO_UPCAST and failure.facts[ONE_STEP] == 1
    assert "16 values are one bfloat16 step off" in failure.details
    test = TestResult("t::a", Outcome.FAILED, dx.BF16_NO_UPCAST, "m", where="w", facts={})
    assert interpreter_note(test, BackendName.CPU) == INTERPRETER_MADE_THESE
    test.facts[ONE_STEP] = 1
    assert interpreter_note(test, BackendName.CPU) == ""


def test_the_backend_paragraph_is_said_once_a_run(tmp_path):
    note = "This verdict depends on the backend."
    tests = [
        TestResult(
            f"t::case{n}",
            Outcome.FAILED,
            dx.BF16_NO_UPCAST,
            f"y: {n} of 9 values differ",
            facts={BACKEND_NOTE: note},
        )
        for n in range(4)
    ]
    result = RunResult("d1", "x.py", RunStatus.FAILED, tests=tests, diagnoses=[dx.BF16_NO_UPCAST])
    book = HintBook(_hints(tmp_path, LADDER), "d1")
    assert format_run(result, book).count(note) == 1


def test_a_renamed_failure_drops_the_old_diagnosis_way():
    """A way names how the old diagnosis's mistake was written: under another diagnosis (a
    stride in an allocated tensor renamed trans-mask by t5's test) it would pick stages that
    ladder does not have."""
    failure = DrillFailure(dx.ROW_STRIDE, "m", facts={"way": "allocated", "shape": "[4, 8]"})
    renamed = failure.renamed("trans-mask", "evidence")
    assert renamed.facts == {"shape": "[4, 8]"}
    assert failure.renamed("rope-sign", "e", way="one-half").facts["way"] == "one-half"
