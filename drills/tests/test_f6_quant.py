"""Tests for drill F6: per-token symmetric int8 quantization (q, scale).

The reference is computed here with torch from exactly the values the kernel loads: the scale
in fp32 as the kernel computes it (amax / 127, one correctly rounded division), x / scale in
fp64, clamped, rounded to nearest. The scale is checked first, against what each classic mistake
would make of it (no floor for a zero row, the signed max instead of the largest magnitude, the
multiplier 127 / amax in its place); then q must match exactly. Inputs are built so that no
x / scale lies within 1e-3 of a rounding boundary (a half-integer) or of an integer (where
truncation would flip): a correct kernel that divides in another way (x * (127 / amax), the
GPU's approximate division) rounds every element the same, so q can be compared bit for bit and
truncation can be told apart from rounding.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    expect_close,
    guarded,
)
from tutor.harness import diagnoses as dx

DRILL = "f6"

QMAX = 127.0
AMAX_MIN = 1e-10

ZERO_ROW = "zero-row"
NO_CLAMP = "no-clamp"
SIGNED_AMAX = "signed-amax"
SCALE_DTYPE = "scale-dtype"
TRUNCATED = "no-round"
SCALE_INVERSE = "scale-inverse"

# scale = amax / 127 in fp32: the GPU's division may be an ulp or two off the correctly rounded
# one (1.2e-7 relative each). atol = 0, so a zero row's scale of 7.9e-13 cannot pass as 0.
SCALE_TOL = Tolerance(atol=0.0, rtol=1e-6)
# q is an integer and no x / scale sits near a rounding boundary (see _away_from_boundaries):
# every correct kernel gives the same q, to the bit.
EXACT = Tolerance(atol=0.0, rtol=0.0)
# How close to a boundary x / scale may come. Another correct way to divide moves it by a few
# fp32 ulps of 127 (about 1e-5): 1e-3 leaves a hundredfold margin.
MARGIN = 1e-3


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake computes instead
# ----------------------------------------------------------------------------------------------


def _amax(x: torch.Tensor, amax_ub: float | None, mistake: str | None = None) -> torch.Tensor:
    xf = x.float()
    amax = xf.amax(-1) if mistake == SIGNED_AMAX else xf.abs().amax(-1)
    if amax_ub is not None:
        amax = amax.clamp_max(amax_ub)
    return amax if mistake == ZERO_ROW else amax.clamp_min(AMAX_MIN)


def reference_scale(
    x: torch.Tensor, amax_ub: float | None = None, mistake: str | None = None
) -> torch.Tensor:
    """scale = amax / 127 in fp32; `mistake` names what a buggy kernel computes instead."""
    return _amax(x, amax_ub, mistake) / QMAX


def _ratio(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x / scale in fp64, before any clamping or rounding."""
    return x.double() / scale.double()[:, None]


def _round_away(v: torch.Tensor) -> torch.Tensor:
    """Round to nearest, ties away from zero (ties never occur in these tests)."""
    return torch.sign(v) * torch.floor(v.abs() + 0.5)


def reference_q(x: torch.Tensor, amax_ub: float | None = None, rounding=_round_away):
    v = _ratio(x, reference_scale(x, amax_ub)).clamp(-QMAX, QMAX)
    return rounding(v).to(torch.int8)


def _away_from_boundaries(
    values: torch.Tensor, dtype: torch.dtype, amax_ub: float | None = None
) -> torch.Tensor:
    """`values` in dtype, with every element whose x / scale lies within MARGIN of a
    half-integer or of a non-zero integer below 127 set to 0 (never a row's amax: its ratio is
    127). Zeroing can only lower no row's amax, so the scales stay as they were."""
    x = values.to(dtype)
    v = _ratio(x, reference_scale(x, amax_ub)).abs()
    frac = v - torch.floor(v)
    near_half = (frac - 0.5).abs() < MARGIN
    near_int = ((frac < MARGIN) | (frac > 1 - MARGIN)) & (v > 0.5) & (v < QMAX - 0.5)
    return torch.where(near_half | near_int, torch.zeros_like(x), x)


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def _rows(shape: tuple[int, int], seed: int) -> torch.Tensor:
    """randn rows whose sizes span six orders of magnitude (tokens differ that much).

    Row 0 gets a negative entry -3x larger than anything else in it, so its largest magnitude
    is negative: max(x) instead of max(|x|) gives it a scale three times too small."""
    gen = torch.Generator().manual_seed(seed)
    t, h = shape
    x = torch.randn(shape, generator=gen) * torch.logspace(-3, 3, t)[:, None]
    x[0, h // 3] = -3.0 * x[0].abs().max()
    return x


def _on(device: str, *tensors: torch.Tensor) -> list[torch.Tensor]:
    """Each tensor on device, inside a buffer with NaN on both sides."""
    return [guarded(t.to(device))[0] for t in tensors]


# ----------------------------------------------------------------------------------------------
# The check
# ----------------------------------------------------------------------------------------------

SCALE_SUSPECTS = [
    (ZERO_ROW, "amax / 127 with no floor: a row of zeros gets scale 0 (and 0 / 0 = NaN in q)"),
    (
        SIGNED_AMAX,
        "max(x) / 127 instead of max(|x|) / 127: rows whose largest magnitude is "
        "negative get a scale that is too small",
    ),
]


def _unmasked_scale(x: torch.Tensor) -> torch.Tensor:
    """amax / 127 over BLOCK_H lanes from each row's start, as a load without a mask reads them:
    the lanes past H read whatever follows the row (the next row, the slack of a sliced row;
    the NaN guard after the tensor is left out, as Triton's max ignores NaN). Every test tensor
    sits in a guard, so these reads stay inside its storage."""
    t, h = x.shape
    block = 1 << (h - 1).bit_length()
    lanes = torch.as_strided(x, (t, block), (x.stride(0), 1)).float().cpu()
    return lanes.abs().nan_to_num(0.0).amax(-1).clamp_min(AMAX_MIN) / QMAX


def _out(impl, x: torch.Tensor, amax_ub: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    out = impl.quant_per_token(x) if amax_ub is None else impl.quant_per_token(x, amax_ub)
    if not (isinstance(out, tuple | list) and len(out) == 2):
        raise DrillFailure(
            dx.WRONG_SHAPE,
            f"quant_per_token should return (q, scale), got {type(out).__name__}",
            "Return the two tensors as a tuple: q (int8, like x) and scale (float32, [T]).",
        )
    return out[0], out[1]


def _check(
    q: torch.Tensor,
    scale: torch.Tensor,
    x: torch.Tensor,
    amax_ub: float | None,
    row_stride_rows: torch.Tensor | None = None,
) -> None:
    """The scale first (mistakes show there most clearly), then q to the bit."""

    def scale_suspects() -> list[Suspect]:
        found = [
            Suspect(d, reference_scale(x, amax_ub, d).to(x.device), story)
            for d, story in SCALE_SUSPECTS
        ]
        found.append(
            Suspect(
                SCALE_INVERSE,
                (QMAX / _amax(x, amax_ub)).to(x.device),
                "127 / amax: the multiplier that quantizes x, not the scale amax / 127 that "
                "dequantizes q",
            )
        )
        if amax_ub is not None:
            found.append(
                Suspect(
                    dx.MISMATCH,
                    reference_scale(x).to(x.device),
                    "max(|x|) / 127 with amax_ub ignored: amax must be capped at it",
                )
            )
        if x.stride(-1) == 1:
            found.append(
                Suspect(
                    dx.MISSING_MASK,
                    _unmasked_scale(x).to(x.device),
                    "the scales of BLOCK_H lanes read from the row's start with no "
                    "mask: the lanes past H read the next row",
                )
            )
        if row_stride_rows is not None:
            found.append(
                Suspect(
                    dx.ROW_STRIDE,
                    reference_scale(row_stride_rows).to(x.device),
                    "the scales of rows read H elements apart: the row stride is not H here",
                )
            )
        return found

    want_scale = reference_scale(x, amax_ub).to(x.device)
    try:
        expect_close(
            scale,
            want_scale,
            what="scale",
            tol=SCALE_TOL,
            suspects=scale_suspects,
            dtype_diagnosis=SCALE_DTYPE,
            reads_guarded=True,
        )
    except DrillFailure as failure:
        if failure.diagnosis == dx.MISMATCH:
            _name_floor_mistake(scale, want_scale, x, amax_ub, failure)
        raise
    want = reference_q(x, amax_ub).to(x.device)
    try:
        expect_close(q, want, what="q", tol=EXACT, reads_guarded=True)
    except DrillFailure as failure:
        if failure.diagnosis != dx.MISMATCH:
            raise
        _name_q_mistake(q.cpu(), want.cpu(), x.cpu(), amax_ub, failure)
        raise


def _name_floor_mistake(
    scale: torch.Tensor,
    want: torch.Tensor,
    x: torch.Tensor,
    amax_ub: float | None,
    failure: DrillFailure,
) -> None:
    """`zero-row` guarded some other way: the scale is wrong only in rows whose amax is below the
    floor (a where(amax == 0, 1, ...), or the floor put on the scale instead of on amax)."""
    tiny = (_amax(x, amax_ub, ZERO_ROW) <= AMAX_MIN).cpu()
    got, expected_scale = scale.detach().float().cpu(), want.float().cpu()
    wrong = ~torch.isclose(got, expected_scale, atol=SCALE_TOL.atol, rtol=SCALE_TOL.rtol)
    if tiny.any() and wrong.any() and not (wrong & ~tiny).any():
        rows = wrong.nonzero()[:, 0].tolist()
        raise failure.renamed(
            ZERO_ROW,
            f"Your scale is right in every row except row(s) {', '.join(map(str, rows[:6]))}, "
            f"whose amax is 0 or below the floor {AMAX_MIN:g}: there it is "
            f"{float(got[rows[0]]):g} where max(amax, {AMAX_MIN:g}) / 127 = "
            f"{float(expected_scale[rows[0]]):g}. The floor goes on amax, before the division, "
            "and it is the drill's guard for zero rows (not a where() or a floor on the scale).",
        ) from None


def _name_q_mistake(
    q: torch.Tensor,
    want: torch.Tensor,
    x: torch.Tensor,
    amax_ub: float | None,
    failure: DrillFailure,
) -> None:
    """The scale is right but q is not: truncation, or no clamp before the cast?"""
    v = _ratio(x, reference_scale(x, amax_ub))
    wrong = q != want
    outside = v.abs() > QMAX
    if outside.any() and not (wrong & ~outside).any():
        raise failure.renamed(
            NO_CLAMP,
            f"q is right wherever |x / scale| <= 127 and wrong at {int(wrong.sum())} of the "
            f"{int(outside.sum())} entries past it (x beyond amax_ub): without a clamp, the "
            "cast to int8 wraps around or saturates at -128 instead of giving +-127.",
        ) from None
    truncated = torch.trunc(v.clamp(-QMAX, QMAX)).to(torch.int8)
    # Truncation flips at integers: only a row's amax (x / scale = 127, give or take an ulp)
    # lies near one, and is left out of the comparison.
    dist = (v - torch.round(v)).abs()
    stable = (dist > MARGIN) | (v == 0)
    if torch.equal(q[stable], truncated[stable]):
        raise failure.renamed(
            TRUNCATED,
            "Your q matches x / scale truncated toward zero: the cast to int8 drops the "
            "fraction, it does not round.",
        ) from None
    floored = torch.floor(v.clamp(-QMAX, QMAX)).to(torch.int8)
    if torch.equal(q[stable], floored[stable]):
        raise failure.renamed(
            TRUNCATED,
            "Your q matches x / scale rounded down (floor): -3.4 gives -4 and 3.6 gives 3. "
            "Round to the nearest integer instead.",
        ) from None


def expect_quant(
    impl,
    x: torch.Tensor,
    amax_ub: float | None = None,
    rerun_fp32: Callable[[], torch.Tensor] | None = None,
    row_stride_rows: torch.Tensor | None = None,
) -> None:
    q, scale = _out(impl, x, amax_ub)
    try:
        _check(q, scale, x, amax_ub, row_stride_rows)
    except DrillFailure as failure:
        # bf16 arithmetic without an upcast: the same kernel is right on fp32 copies.
        if x.dtype == torch.float32 or failure.diagnosis not in (dx.MISMATCH, dx.NAN_OR_INF):
            raise
        x32 = rerun_fp32() if rerun_fp32 else _on(x.device.type, x.float())[0]
        try:
            _check(*_out(impl, x32, amax_ub), x32, amax_ub)
        except DrillFailure:
            raise failure from None
        raise failure.renamed(
            dx.BF16_NO_UPCAST,
            f"The same kernel is right on fp32 inputs: arithmetic on {x.dtype} values needs "
            "a .to(tl.float32) after the load.",
        ) from None


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------

# H is never a power of two, so every row has padded lanes; few rows (one program each).
CASES = [
    pytest.param((5, 123), torch.float32, id="5x123-fp32"),
    pytest.param((4, 1000), torch.bfloat16, id="4x1000-bf16"),
    pytest.param((6, 77), torch.bfloat16, id="6x77-bf16"),
]


@pytest.mark.parametrize(("shape", "dtype"), CASES)
def test_quant_matches_reference(impl, backend, shape, dtype):
    """Rows of very different sizes; row 0's largest magnitude is negative (signed-amax)."""
    (x,) = _on(backend.device, _away_from_boundaries(_rows(shape, seed=sum(shape)), dtype))
    expect_quant(impl, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_zero_and_tiny_rows(impl, backend, dtype):
    """A row of zeros must get scale 1e-10 / 127 and q = 0, never NaN; a row whose amax is
    below the floor (3e-12) gets the same scale, and q = round(x / scale) as usual."""
    values = _rows((4, 50), seed=4)
    values[1] = 0.0
    values[2] = values[2] / values[2].abs().max() * 3e-12
    (x,) = _on(backend.device, _away_from_boundaries(values, dtype))
    expect_quant(impl, x)


def test_amax_ub_saturates(impl, backend):
    """amax capped at 4: rows with entries up to +-20 get scale 4 / 127, and those entries
    (x / scale up to +-635) must clamp to +-127 before the cast. Row 2 stays below the cap."""
    amax_ub = 4.0
    gen = torch.Generator().manual_seed(6)
    values = torch.randn((3, 300), generator=gen)
    values[0, ::7] = 5.0 + 15.0 * torch.rand(43, generator=gen)
    values[1, 1::5] = -(5.0 + 15.0 * torch.rand(60, generator=gen))
    values[1, 3::11] = 5.0 + 15.0 * torch.rand(27, generator=gen)
    values[2] = values[2].clamp(-3.5, 3.5)
    (x,) = _on(backend.device, _away_from_boundaries(values, torch.bfloat16, amax_ub))
    expect_quant(impl, x, amax_ub)


def test_row_sliced_input(impl, backend):
    """bf16 rows H + 28 apart in memory (a slice of wider rows). The 28 extra columns hold
    values 50 times larger, so a kernel that reads row r at r * H takes them into its amax."""
    t, h, slack = 4, 100, 28
    gen = torch.Generator().manual_seed(9)
    wide = 50.0 * torch.randn((t, h + slack), generator=gen)
    wide[:, :h] = _rows((t, h), seed=9)[:, :h] / 1000.0
    wide[:, :h] = _away_from_boundaries(wide[:, :h], torch.bfloat16).float()
    (base,) = _on(backend.device, wide.to(torch.bfloat16))
    x = base[:, :h]
    flat = base.reshape(-1)[: t * h].reshape(t, h).cpu()  # rows read H apart

    def rerun() -> torch.Tensor:
        return _on(backend.device, wide)[0][:, :h]

    expect_quant(impl, x, rerun_fp32=rerun, row_stride_rows=flat)


def test_scale_is_float32_per_row(impl, backend: Backend):
    """scale is float32 of shape [T] whatever x's dtype; q is int8 like x's shape."""
    (x,) = _on(backend.device, _away_from_boundaries(_rows((3, 40), seed=2), torch.bfloat16))
    q, scale = _out(impl, x, None)
    if not isinstance(scale, torch.Tensor) or tuple(scale.shape) != (3,):
        found = tuple(scale.shape) if isinstance(scale, torch.Tensor) else type(scale).__name__
        raise DrillFailure(dx.WRONG_SHAPE, f"scale is {found}, expected shape (3,): one per row")
    if scale.dtype != torch.float32:
        raise DrillFailure(
            SCALE_DTYPE,
            f"scale has dtype {scale.dtype}, expected float32",
            "bf16 keeps 8 bits of mantissa: a bf16 scale is up to 0.4% off, and "
            "every dequantized value of the row with it.",
        )
    if not isinstance(q, torch.Tensor) or q.dtype != torch.int8 or tuple(q.shape) != (3, 40):
        found = f"{q.dtype} {tuple(q.shape)}" if isinstance(q, torch.Tensor) else type(q).__name__
        raise DrillFailure(dx.WRONG_DTYPE, f"q is {found}, expected int8 (3, 40)")
