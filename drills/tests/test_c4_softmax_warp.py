"""Drill c4: softmax with one warp per row in CUDA C++, the row's max and sum reduced by
shuffles. The kernels run on the GPU (NVRTC) or on the CPU (the system C++ compiler), and a
deep check runs them in the sanitizer builds for out-of-bounds accesses and shuffles that not
every lane of their mask reaches.

The host launches blocks of 32 x 4 threads, one warp (threadIdx.y) per row, and rounds the
grid up to whole blocks (drills/host/c4_softmax_warp.py). The output tests use row counts that
fill whole blocks; the deep check's input has rows past the end, which the kernel must skip.
What a mistake gives depends on which columns each lane took: one at a time (lane l takes l,
l + 32, ...), or in 16-byte vectors (8 bf16 or 4 floats); the suspects are built for each.
"""

from __future__ import annotations

import torch

from tutor.course import diagnoses as dx
from tutor.harness import (
    DrillFailure,
    Suspect,
    Tolerance,
    expect_clean,
    expect_close,
    round_to,
    row_sliced,
)

DRILL = "c4"
NO_MAX_SUBTRACTION = "no-max-subtraction"
HALF_WARP_REDUCE = "half-warp-reduce"
PADDING_NEG_INF = "padding-neg-inf"
WARP = 32
# fp32: the GPU's __expf is approximate (2 ulp) and the sums run in another order than torch's
FP32 = Tolerance(atol=1e-6, rtol=1e-5)
BF16 = Tolerance(atol=1e-6, rtol=2**-7)  # bf16 output: one ulp of the result


def _tol(dtype: torch.dtype) -> Tolerance:
    return BF16 if dtype == torch.bfloat16 else FP32


def _reference(x: torch.Tensor, backend) -> torch.Tensor:
    return round_to(torch.softmax(x.float(), dim=-1), x.dtype, backend)


def _widths(dtype: torch.dtype) -> tuple[int, ...]:
    """Columns a lane takes at a time: a 16-byte vector, or one value."""
    return (16 // torch.empty((), dtype=dtype).element_size(), 1)


def _lanes(n: int, width: int) -> torch.Tensor:
    return (torch.arange(n) // width) % WARP


def _half_warp(x: torch.Tensor, width: int, both_halves: bool, backend) -> torch.Tensor:
    """Softmax whose max and sum were reduced over 16 lanes: each half of the warp on its own
    (a butterfly from offset 8), or lanes 0-15's for every lane (a reduction to lane 0 from
    offset 8, then broadcast)."""
    xf = x.float()
    low = (_lanes(x.shape[-1], width) < WARP // 2).to(x.device)
    neg_inf = torch.tensor(float("-inf"), device=x.device)
    max_low = torch.where(low, xf, neg_inf).amax(-1, keepdim=True)
    if both_halves:
        max_high = torch.where(~low, xf, neg_inf).amax(-1, keepdim=True)
        m = torch.where(low, max_low, max_high)
        e = torch.exp(xf - m)
        s_low = (e * low).sum(-1, keepdim=True)
        s_high = (e * ~low).sum(-1, keepdim=True)
        return round_to(e / torch.where(low, s_low, s_high), x.dtype, backend)
    e = torch.exp(xf - max_low)
    return round_to(e / (e * low).sum(-1, keepdim=True), x.dtype, backend)


def _suspects(x: torch.Tensor, backend) -> list[Suspect]:
    found = []
    for width in _widths(x.dtype):
        found += [
            Suspect(
                HALF_WARP_REDUCE,
                _half_warp(x, width, True, backend),
                f"a max and a sum over each half of the warp on its own (lanes taking their "
                f"columns {width} at a time): shuffles from offset 8, or of width 16",
            ),
            Suspect(
                HALF_WARP_REDUCE,
                _half_warp(x, width, False, backend),
                f"lanes 0-15's max and sum given to every lane (lanes taking their columns "
                f"{width} at a time): a reduction to lane 0 that starts at offset 8",
            ),
        ]
    return found


def _check(impl, x: torch.Tensor, backend, want=None) -> torch.Tensor:
    y = impl.softmax(x)
    expect_close(
        y,
        _reference(x, backend) if want is None else want,
        what=f"output for a {str(x.dtype).removeprefix('torch.')} x of shape {tuple(x.shape)}",
        tol=_tol(x.dtype),
        suspects=lambda: _suspects(x, backend),
    )
    return y


def _randn(shape, dtype, device, seed, scale=2.0, offset=0.0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=gen) * scale + offset).to(dtype).to(device)


def test_rows_of_1000_floats(impl, backend):
    """Eight rows of 1000 fp32 values: two blocks of four warps, 31 or 32 values a lane."""
    _check(impl, _randn((8, 1000), torch.float32, backend.device, 0), backend)


def test_bf16_rows_of_150_in_a_3d_tensor(impl, backend):
    """x [2, 4, 150] bf16: eight rows, a width that is no multiple of 8."""
    _check(impl, _randn((2, 4, 150), torch.bfloat16, backend.device, 1), backend)


def test_rows_narrower_than_a_warp(impl, backend):
    """Rows of 20 values: lanes 20 to 31 have no column, and still take part in the shuffles."""
    _check(impl, _randn((4, 20), torch.bfloat16, backend.device, 2), backend)


def _zero_padding(x: torch.Tensor, y: torch.Tensor, backend) -> Suspect | None:
    """What y would be if `pad` slots past the row's end, holding 0, entered the max and the sum
    of these all-negative rows (the max is then 0): exp(x) / (sum(exp(x)) + pad). `pad` is
    read from y itself, and must be a whole number, the same in every row."""
    e = torch.exp(x.double())
    s = e.sum(-1, keepdim=True)
    implied = e / y.double() - s  # per value: the pad that would give it
    if not torch.isfinite(implied).all():
        return None
    pad = implied.median()
    if pad < 0.5 or not torch.allclose(implied, pad.expand_as(implied), rtol=0.05, atol=0.05):
        return None
    pad = round(float(pad))
    return Suspect(
        PADDING_NEG_INF,
        round_to((e / (s + pad)).float(), x.dtype, backend),
        f"a softmax whose {pad} slots past the end of each row held 0: they entered the max and "
        "the sum (-inf adds nothing to either)",
    )


def test_all_negative_rows(impl, backend):
    """Rows of 300 values between -5 and -1: a 0 where -inf belongs wins their max and adds to
    their sum. Then rows near -200: exp of anything minus 0 underflows to 0 there."""
    gen = torch.Generator().manual_seed(3)
    x = (-(torch.rand(4, 300, generator=gen) * 4 + 1)).to(backend.device)
    y = impl.softmax(x)
    expect_close(
        y,
        _reference(x, backend),
        what="output for rows of 300 values between -5 and -1",
        tol=FP32,
        suspects=lambda: [s for s in [_zero_padding(x, y, backend)] if s] + _suspects(x, backend),
    )
    deep = x - 195.0
    try:
        _check(impl, deep, backend)
    except DrillFailure as failure:
        if failure.diagnosis not in (dx.NAN_OR_INF, dx.MISMATCH, dx.OUTPUT_UNTOUCHED):
            raise
        shifted = deep + 400.0  # the same rows near +200: their max is their own
        y_shifted = impl.softmax(shifted)
        if torch.allclose(y_shifted, _reference(shifted, backend), atol=FP32.atol, rtol=FP32.rtol):
            raise failure.renamed(
                PADDING_NEG_INF,
                "Rows near -200 come out wrong, and the same rows near +200 right: the max of a "
                "row below 0 came out as 0, so every exp(x - max) underflowed to 0. A max that "
                "starts at 0, or a lane without columns that brings 0, wins over a row that is "
                "all negative; -inf never wins.",
            ) from None
        raise


def test_rows_near_plus_200(impl, backend):
    """Rows of 512 values near +200: exp(200) is inf in float32, exp(x - max) is not."""
    x = _randn((4, 512), torch.float32, backend.device, 4, scale=1.0, offset=200.0)

    def suspects() -> list[Suspect]:
        raw = torch.exp(x.float())
        return [
            Suspect(
                NO_MAX_SUBTRACTION,
                round_to(raw / raw.sum(-1, keepdim=True), x.dtype, backend),
                "exp of the raw input: inf for every value above 88.7, and inf / inf is NaN",
            )
        ] + _suspects(x, backend)

    y = impl.softmax(x)
    expect_close(
        y,
        _reference(x, backend),
        what="output for rows near +200",
        tol=FP32,
        suspects=suspects,
    )


def test_rows_longer_than_a_lane_holds(impl, backend):
    """Rows of 5000 bf16 and 2500 fp32 values: longer than the 4096 and 2048 a warp of the
    reference keeps in registers, so each lane loops over its columns."""
    _check(impl, _randn((4, 5000), torch.bfloat16, backend.device, 5), backend)
    _check(impl, _randn((4, 2500), torch.float32, backend.device, 6), backend)


def test_sliced_rows(impl, backend):
    """Rows of 96 floats read from rows 109 apart: the row stride is not 96."""
    x = _randn((4, 96), torch.float32, backend.device, 7)
    view, _base = row_sliced(x, slack=13)
    _check(impl, view, backend, want=_reference(x, backend))


def test_rows_past_the_end_and_no_access_outside_the_buffers(impl, backend):
    """Five rows of 24 bf16 in the sanitizer builds (on the CPU): two blocks of four warps, so
    three warps have no row and must not touch x or y; lanes 3 to 31 (of 3 vectors) or 24 to 31
    (of 24 values) have no column and must still take part in every shuffle."""
    x = _randn((5, 24), torch.bfloat16, backend.device, 8)
    expect_clean(impl, "softmax", x)
