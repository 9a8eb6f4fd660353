"""expect_close names the mistake: suspects first, then the generic failure patterns."""

from __future__ import annotations

import pytest
import torch

from tutor.course import diagnoses as dx
from tutor.harness import inputs
from tutor.harness.backend import CPU, CUDA, Backend, round_to
from tutor.harness.checks import (
    Suspect,
    Tolerance,
    expect_close,
    expect_unchanged,
    raise_if_edges_unwritten,
    where_wrong,
)
from tutor.harness.failures import DrillFailure
from tutor.run.agreement import END_UNWRITTEN

TOL = Tolerance(atol=1e-5, rtol=1e-5)  # fp32 math on both sides


def _diagnosis(actual, expected, **kwargs) -> DrillFailure:
    with pytest.raises(DrillFailure) as caught:
        expect_close(actual, expected, what="y", tol=TOL, **kwargs)
    return caught.value


def test_close_output_passes():
    x = torch.randn(4, 7)
    expect_close(x + 1e-7, x, what="y", tol=TOL)


def test_message_says_how_many_where_and_by_how_much():
    want = torch.zeros(3, 5)
    got = want.clone()
    got[2, 4] = 0.5
    failure = _diagnosis(got, want)
    assert failure.diagnosis == dx.MISMATCH
    assert "1 of 15 values differ" in failure.message and "worst at [2, 4]" in failure.message
    assert "got 0.5, expected 0" in failure.message


def test_the_worst_value_is_shown_with_the_digits_that_tell_it_apart():
    """Under a tolerance tighter than 6 digits, "got 1.20903, expected 1.20903" would say
    nothing: the message shows as many digits as it takes."""
    want = torch.tensor([1.2090312])
    got = torch.tensor([1.2090334])
    with pytest.raises(DrillFailure) as caught:
        expect_close(got, want, what="y", tol=Tolerance(atol=1e-7, rtol=1e-7))
    assert "got 1.209033, expected 1.209031" in caught.value.message


def test_shape_and_dtype_come_first():
    assert _diagnosis(torch.zeros(3), torch.zeros(4)).diagnosis == dx.WRONG_SHAPE
    assert (
        _diagnosis(torch.zeros(3), torch.zeros(3, dtype=torch.bfloat16)).diagnosis == dx.WRONG_DTYPE
    )
    custom = _diagnosis(
        torch.zeros(3, dtype=torch.bfloat16), torch.zeros(3), dtype_diagnosis="stats-dtype"
    )
    assert custom.diagnosis == "stats-dtype"
    assert _diagnosis((1, 2), torch.zeros(2)).diagnosis == dx.WRONG_SHAPE


def test_matching_suspect_names_the_mistake():
    want = torch.linspace(1, 2, 10)
    wrong = want * 1.1
    failure = _diagnosis(
        wrong,
        want,
        suspects=[
            Suspect("other", want * 0.5, "half"),
            Suspect("ten-percent", want * 1.1, "the 10% one"),
        ],
    )
    assert failure.diagnosis == "ten-percent"
    assert "matches the 10% one" in failure.details


def test_two_mistakes_that_fit_about_as_well_are_no_evidence_for_either():
    """Where two suspects of different diagnoses both fit, neither is claimed (the run's
    other tests tell them apart); one that fits 4 times closer is claimed, wherever listed."""
    want = torch.linspace(1, 2, 10)
    wrong = want * 1.1
    near = wrong + 2e-5  # within the tolerance of wrong, but not exactly it
    both = [Suspect("first", near, "a"), Suspect("second", wrong - 2e-5, "b")]
    assert _diagnosis(wrong, want, suspects=both).diagnosis == dx.MISMATCH
    closer = [Suspect("first", near, "a"), Suspect("second", wrong, "b")]
    assert _diagnosis(wrong, want, suspects=closer).diagnosis == "second"
    same = [Suspect("first", near, "a"), Suspect("first", wrong - 2e-5, "b")]
    assert _diagnosis(wrong, want, suspects=same).diagnosis == "first"


def test_suspects_given_as_a_function_are_built_only_for_a_wrong_output():
    want = torch.linspace(1, 2, 10)
    built = []

    def suspects():
        built.append(True)
        return [Suspect("ten-percent", want * 1.1, "the 10% one")]

    expect_close(want.clone(), want, what="y", tol=TOL, suspects=suspects)
    assert not built
    assert _diagnosis(want * 1.1, want, suspects=suspects).diagnosis == "ten-percent"
    assert built == [True]


def test_suspect_that_does_not_fit_is_not_named():
    want = torch.linspace(1, 2, 10)
    failure = _diagnosis(want * 1.3, want, suspects=[Suspect("ten-percent", want * 1.1, "x")])
    assert failure.diagnosis == dx.MISMATCH


def test_suspect_with_nan_matches_nan_output():
    want = torch.tensor([0.2, 0.3, 0.5])
    overflowed = torch.tensor([float("nan"), float("nan"), 0.5])
    failure = _diagnosis(overflowed.clone(), want, suspects=[Suspect("no-max", overflowed, "x")])
    assert failure.diagnosis == "no-max"


def test_nan_from_guarded_memory_is_a_missing_mask():
    want = torch.ones(4)
    got = torch.tensor([1.0, 1.0, 1.0, float("nan")])
    assert _diagnosis(got, want, reads_guarded=True).diagnosis == dx.MISSING_MASK
    assert _diagnosis(got, want).diagnosis == dx.NAN_OR_INF


def test_untouched_and_all_zero_outputs():
    before = torch.randn(5)
    assert _diagnosis(before.clone(), before + 1, untouched=before).diagnosis == dx.OUTPUT_UNTOUCHED
    assert _diagnosis(torch.zeros(5), torch.ones(5)).diagnosis == dx.OUTPUT_UNTOUCHED


def _fresh_calls(monkeypatch) -> None:
    """The learner's last call is kept module-wide, as evidence for the check after it: put
    it back after the test, so the tests that check no call see none."""
    from tutor.harness import learner

    monkeypatch.setattr(learner, "last_call", learner.last_call)
    monkeypatch.setattr(learner, "_returned", {})


def test_all_zeros_is_untouched_only_where_the_memory_could_have_been_zero(tmp_path, monkeypatch):
    """A kernel that writes zeros into torch.empty's memory wrote it (the harness fills that
    memory with a sentinel first): its all-zero output is a wrong value, not one never written.
    An output made by torch.zeros and left alone is `output-untouched`."""
    from tutor.harness import learner

    _fresh_calls(monkeypatch)

    path = tmp_path / "mine.py"
    path.write_text(
        "import torch\n"
        "from tutor.kernels import launches\n"
        "def launch():\n"
        "    launches.record(launches.Launch((1,), ()))  # stands in for kernel[(1,)](...)\n"
        "def written_with_zeros(x):\n"
        "    launch()  # a kernel that stores 0.0\n"
        "    out = torch.empty_like(x)\n"
        "    out.fill_(0.0)\n"
        "    return out\n"
        "def never_written(x):\n"
        "    launch()  # a kernel whose stores all miss\n"
        "    return torch.zeros_like(x)\n"
    )
    module = learner.load(path, ("written_with_zeros", "never_written"))
    x = torch.ones(5)
    assert _diagnosis(module.written_with_zeros(x), x).diagnosis == dx.MISMATCH
    assert _diagnosis(module.never_written(x), x).diagnosis == dx.OUTPUT_UNTOUCHED


def test_grid_too_small_needs_launches_that_can_stop_where_the_writes_stop(tmp_path, monkeypatch):
    """A grid that rounds down stops on a whole number of blocks: 3 programs of 256 leave
    index 768 on unwritten. A right-sized grid whose mask is one lane short, or whose column
    programs all store the first block, stops elsewhere: no grid-too-small for those."""
    from tutor.harness import learner

    _fresh_calls(monkeypatch)

    path = tmp_path / "mine.py"
    path.write_text(
        "import torch\n"
        "from tutor.kernels import launches\n"
        "def launch(grid, *blocks):  # stands in for kernel[grid](..., BLOCK=...)\n"
        "    launches.record(launches.Launch(grid, blocks))\n"
        "def floor_grid(x):\n"
        "    out = torch.empty_like(x)\n"
        "    launch((x.numel() // 256,), 256)\n"
        "    out[:768] = x[:768]\n"
        "    return out\n"
        "def two_blocks_a_program(x):\n"
        "    out = torch.empty_like(x)\n"
        "    launch((x.numel() // 512,), 256)  # each program walks two blocks of 256\n"
        "    out[:512] = x[:512]\n"
        "    return out\n"
        "def mask_one_short(x):\n"
        "    out = torch.empty_like(x)\n"
        "    launch((4,), 256)\n"
        "    out[:-1] = x[:-1]\n"
        "    return out\n"
        "def first_block_everywhere(x):\n"
        "    out = torch.empty_like(x)\n"
        "    launch((2, 4), 512)  # a row a program, four column programs\n"
        "    out[:, :512] = x[:, :512]\n"
        "    return out\n"
    )
    names = ("floor_grid", "two_blocks_a_program", "mask_one_short", "first_block_everywhere")
    module = learner.load(path, names)
    flat, rows = torch.randn(1000), torch.randn(2, 2000)
    assert _diagnosis(module.floor_grid(flat), flat).diagnosis == dx.GRID_TOO_SMALL
    assert _diagnosis(module.two_blocks_a_program(flat), flat).diagnosis == dx.GRID_TOO_SMALL
    assert _diagnosis(module.mask_one_short(flat), flat).diagnosis != dx.GRID_TOO_SMALL
    assert _diagnosis(module.first_block_everywhere(rows), rows).diagnosis == dx.MISMATCH


def test_an_output_is_judged_by_the_launches_of_the_call_that_made_it(tmp_path, monkeypatch):
    """A test may call the learner's function again on another input (a probe) before it
    judges the first output: the grid claim still reads the first call's launches."""
    from tutor.harness import learner

    _fresh_calls(monkeypatch)

    path = tmp_path / "mine.py"
    path.write_text(
        "import torch\n"
        "from tutor.kernels import launches\n"
        "def floor_grid(x):\n"
        "    out = torch.empty_like(x)\n"
        "    grid = (x.numel() // 256,)\n"
        "    launches.record(launches.Launch(grid, (256,)))\n"
        "    out[: grid[0] * 256] = x[: grid[0] * 256]\n"
        "    return out\n"
    )
    module = learner.load(path, ("floor_grid",))
    flat = torch.randn(1000)
    first = module.floor_grid(flat)
    module.floor_grid(torch.randn(4096))  # a probe: 16 programs, which cannot stop at 768
    assert _diagnosis(first, flat).diagnosis == dx.GRID_TOO_SMALL


def test_a_copy_the_learner_makes_of_an_input_is_fenced_like_the_input(tmp_path, monkeypatch):
    """x.contiguous() of a transposed input is new memory: past its end is what is past the
    test's inputs (NaN, 0 in guard_fill), on every run, and NaN read from there is a load past
    the end; an input already contiguous is not copied, and nothing is fenced."""
    from tutor.harness import learner

    _fresh_calls(monkeypatch)

    path = tmp_path / "mine.py"
    path.write_text(
        "import torch\n"
        "from tutor.kernels import launches\n"
        "def past_the_copy(x):\n"
        "    launches.record(launches.Launch(None, ()))  # a kernel reading one lane past the end\n"
        "    c = x.contiguous()\n"
        "    flat = torch.as_strided(c, (c.numel() + 1,), (1,), c.storage_offset())\n"
        "    out = flat[1:].reshape(c.shape).clone()\n"
        "    return out, c\n"
        "def no_copy(x):\n"
        "    launches.record(launches.Launch(None, ()))\n"
        "    c = x.contiguous()\n"
        "    return c + 1, c\n"
    )
    module = learner.load(path, ("past_the_copy", "no_copy"))
    x = torch.arange(12.0).reshape(3, 4)
    out, copy = module.past_the_copy(x.t())
    assert copy.data_ptr() != x.data_ptr() and bool(out.reshape(-1)[-1].isnan())
    assert learner.call_behind(out).copied_inputs
    want = x.t().contiguous().reshape(-1)[1:].tolist() + [11.0]
    assert _diagnosis(out, torch.tensor(want).reshape(4, 3)).diagnosis == dx.MISSING_MASK
    with inputs.guard_fill(0.0):
        out, _ = module.past_the_copy(x.t())
    assert out.reshape(-1)[-1].item() == 0.0
    out, same = module.no_copy(x)
    assert same.data_ptr() == x.data_ptr() and not learner.call_behind(out).copied_inputs


def test_only_the_tail_wrong():
    want = torch.ones(2, 10)
    got = want.clone()
    got[:, 9] = 3
    tail = inputs.padded_tail(10, 8, (2, 10), "cpu")
    assert _diagnosis(got, want, tail=tail).diagnosis == dx.TAIL_WRONG
    got[0, 0] = 3
    assert _diagnosis(got, want, tail=tail).diagnosis == dx.MISMATCH


def test_fp32_rerun_that_passes_means_no_upcast():
    want = torch.ones(4, dtype=torch.bfloat16)
    garbage = torch.full((4,), 7.0, dtype=torch.bfloat16)
    failure = _diagnosis(
        garbage, want, fp32_rerun=lambda: torch.ones(4), fp32_expected=torch.ones(4)
    )
    assert failure.diagnosis == dx.BF16_NO_UPCAST
    still_wrong = _diagnosis(
        garbage, want, fp32_rerun=lambda: torch.zeros(4) + 7, fp32_expected=torch.ones(4)
    )
    assert still_wrong.diagnosis == dx.MISMATCH


def test_guard_overwritten_is_a_missing_mask():
    view, buffer = inputs.guarded(torch.arange(6.0).view(2, 3))
    before = buffer.clone()
    assert torch.isnan(buffer[: inputs.GUARD]).all() and view.is_contiguous()
    expect_unchanged(buffer, before, what="x")
    buffer[inputs.GUARD + 6] = 0.0
    with pytest.raises(DrillFailure) as caught:
        expect_unchanged(buffer, before, what="x")
    assert caught.value.diagnosis == dx.MISSING_MASK


def test_row_sliced_view_has_longer_rows_full_of_nan():
    view, base = inputs.row_sliced(torch.ones(3, 5), slack=3)
    assert view.shape == (3, 5) and view.stride() == (8, 1)
    assert torch.isnan(base[:, 5:]).all() and (view == 1).all()


def test_bf16_rounding_follows_the_backend():
    value = torch.tensor([1.005859375])  # between two bf16 values, nearer the upper one
    interpreter = Backend(CPU, "cpu", "", bf16_truncates=True)
    gpu, cuda_on_cpu = Backend(CUDA, "cuda", ""), Backend(CPU, "cpu", "")
    assert round_to(value, torch.bfloat16, interpreter).item() == 1.0  # Triton's truncates
    assert round_to(value, torch.bfloat16, gpu).item() == 1.0078125  # the GPU rounds to nearest
    assert round_to(value, torch.bfloat16, cuda_on_cpu).item() == 1.0078125  # as the GPU does
    assert round_to(-value, torch.bfloat16, interpreter).item() == -1.0


def test_a_failure_a_test_raises_itself_can_say_where_too():
    """where_wrong gives a test's own DrillFailure the sentence and map expect_close gives."""
    want = torch.arange(40.0).reshape(4, 10)
    got = want.clone()
    got[2:, 5:] = -1.0
    located = where_wrong(got, want, TOL)
    assert "10 of 40 values are wrong" in located["where"] and "rows 2-3" in located["where"]
    assert located["error_map"] == _diagnosis(got, want).error_map


def test_a_renamed_failure_keeps_where_the_output_is_wrong():
    """A test that finds the evidence for a named mistake after expect_close failed renames the
    failure: the new diagnosis and evidence, the same message, line, sentence and map."""
    want = torch.arange(40.0).reshape(4, 10)
    got = want.clone()
    got[:, 8:] = 0.0
    failure = _diagnosis(got, want)
    failure.line = 12
    renamed = failure.renamed("loop-bound", "Columns 8-9 are never written.")
    assert (renamed.diagnosis, renamed.details) == ("loop-bound", "Columns 8-9 are never written.")
    assert (renamed.message, renamed.line) == (failure.message, 12)
    assert renamed.where == failure.where and "columns 8-9" in renamed.where
    assert renamed.error_map == failure.error_map and renamed.error_map
    assert renamed.renamed("x", "y", message="other").message == "other"


def test_a_grid_axis_that_stops_short_is_grid_too_small_not_a_mismatch():
    """The last heads of every token never written, the rest right: the head axis of the grid
    stopped short. A sliver of the last axis (a mask one lane too strict) is not named so."""
    from tutor.harness.allocations import fill_value

    want = torch.randn(5, 6, 32)
    got = want.clone()
    got[:, 4:, :] = fill_value(torch.float32)  # heads 4 and 5 of every token
    failure = _diagnosis(got, want)
    assert failure.diagnosis == dx.GRID_TOO_SMALL
    assert "Along dimension 1 (size 6), everything from index 4 on" in failure.details
    cols = want.clone()
    cols[..., 16:] = fill_value(torch.float32)  # a whole block of 16 lanes of the last axis
    assert _diagnosis(cols, want).diagnosis == dx.GRID_TOO_SMALL
    sliver = want.clone()
    sliver[..., 31:] = fill_value(torch.float32)  # the last lane only
    assert _diagnosis(sliver, want).diagnosis == dx.MISMATCH
    # ... but it is an end left unwritten all the same, for the run's agreement to weigh
    assert END_UNWRITTEN in _diagnosis(sliver, want).facts
    scattered = want.clone()
    scattered[1, 4:, :] = fill_value(torch.float32)  # one token only: not a grid axis
    assert _diagnosis(scattered, want).diagnosis == dx.MISMATCH


def test_last_tile_rows_and_columns_never_written_are_a_2d_grid_too_small():
    """m1's and m2's check: a 2-D output whose last rows and last columns were never written,
    the rest right, is a tiled grid that rounds down; unwritten tiles elsewhere, or a wrong
    written part, are left as the failure said."""
    from tutor.harness.allocations import fill_value

    want = torch.randn(100, 48)
    corner = want.clone()
    corner[96:, :] = fill_value(torch.float32)
    corner[:, 40:] = fill_value(torch.float32)
    failure = _diagnosis(corner, want)
    with pytest.raises(DrillFailure) as renamed:
        raise_if_edges_unwritten(failure, corner, want, TOL, "c")
    assert renamed.value.diagnosis == dx.GRID_TOO_SMALL
    assert "c's rows 96-99 and columns 40-47 were never written" in renamed.value.details
    middle = want.clone()
    middle[32:64, 16:32] = fill_value(torch.float32)  # a tile inside: not a grid that rounds
    raise_if_edges_unwritten(_diagnosis(middle, want), middle, want, TOL, "c")
    wrong_rest = corner.clone()
    wrong_rest[0, 0] += 1.0
    raise_if_edges_unwritten(_diagnosis(wrong_rest, want), wrong_rest, want, TOL, "c")


def test_exact_zeros_from_a_boundary_on_in_a_zero_filled_output_are_grid_too_small():
    """torch.zeros output and a grid that rounds down: exact zeros from a block (16 values) or
    row boundary on where the reference is not 0, the rest right. Zeros the reference has
    too are not evidence, and zeros that start off any boundary are a mask, not a grid."""
    want = torch.randn(1000) + 3.0
    got = want.clone()
    got[768:] = 0.0  # three programs of 256
    failure = _diagnosis(got, want)
    assert failure.diagnosis == dx.GRID_TOO_SMALL
    assert "from index 768 of 1000 on reads exactly 0" in failure.details
    rows = torch.randn(7, 123) + 3.0
    cut = rows.clone()
    cut[5:] = 0.0  # rows 5 and 6: a row boundary (615 is no multiple of 16)
    assert _diagnosis(cut, rows).diagnosis == dx.GRID_TOO_SMALL
    legit = want.clone()
    legit[760:768] = 0.0  # the reference is 0 before the boundary too: still the same verdict
    got_legit = legit.clone()
    got_legit[768:] = 0.0
    assert _diagnosis(got_legit, legit).diagnosis == dx.GRID_TOO_SMALL
    columns = torch.randn(5, 70) + 3.0
    cols_cut = columns.clone()
    cols_cut[:, 64:] = 0.0  # the last column block of every row
    assert "Along dimension 1 (size 70)" in _diagnosis(cols_cut, columns).details
    mask = want.clone()
    mask[999:] = 0.0  # one lane: a mask too strict
    assert _diagnosis(mask, want).diagnosis == dx.MISMATCH
    mixed = want.clone()
    mixed[768:] = 0.0
    mixed[3] = 9.0  # something else wrong too
    assert _diagnosis(mixed, want).diagnosis == dx.MISMATCH
    near_zero = want.clone()
    near_zero[768:] = 1e-3  # small but written: not never written
    assert _diagnosis(near_zero, want).diagnosis == dx.MISMATCH


def test_a_failure_carries_the_numbers_and_the_pattern_of_what_is_wrong():
    """facts: how many values are wrong, where the first is, and the shape (for the hints)."""
    want = torch.arange(1.0, 41.0).reshape(4, 10)
    end = want.clone()
    end[3, 4:] = -1.0
    facts = _diagnosis(end, want).facts
    assert (facts["wrong"], facts["total"], facts["first"]) == (6, 40, "[3, 4]")
    assert facts["pattern"] == "end"
    rows = want.clone()
    rows[1] = want[3].flip(0)  # another row's values: the row address, not a scale
    assert _diagnosis(rows, want).facts["pattern"] == "rows"
    scaled = want.clone()
    scaled[1:3] *= 0.5
    facts = _diagnosis(scaled, want).facts
    assert facts["pattern"] == "factor" and facts["factor"] == "x0.5, x0.5"
    nan = want.clone()
    nan[0] = float("nan")
    assert _diagnosis(nan, want).facts["pattern"] == "nan"
    scattered = want.clone()
    scattered[0, 3] = scattered[2, 7] = 0.5
    assert _diagnosis(scattered, want).facts["pattern"] == ""
    zeros = torch.randn(1000) + 3.0
    cut = zeros.clone()
    cut[768:] = 0.0
    assert _diagnosis(cut, zeros).facts["fill"] == "zeros"
    assert where_wrong(end, want, TOL)["facts"]["wrong"] == 6


def test_the_worst_error_is_the_same_with_or_without_nan_around():
    """The all-finite shortcut and the masked path give the same ratio for the same errors."""
    from tutor.harness.checks import _excess

    want = torch.linspace(-3, 3, 50)
    got = want + 3e-5
    plain = _excess(got, want, TOL)
    assert plain > 1.0
    with_nan = (
        torch.cat([got, torch.tensor([float("nan")])]),
        torch.cat([want, torch.tensor([float("nan")])]),
    )
    assert _excess(*with_nan, TOL) == pytest.approx(plain)
    assert _excess(torch.tensor([float("nan")]), torch.tensor([1.0]), TOL) == float("inf")
    assert _excess(torch.empty(0), torch.empty(0), TOL) == 0.0
