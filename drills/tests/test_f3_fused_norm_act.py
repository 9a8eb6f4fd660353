"""Tests for drill F3: fused_add_rmsnorm (in place, FlashInfer semantics) and silu_and_mul.

Every check compares with a torch reference computed here in fp32 and rounded the way the
backend rounds; on a mismatch it compares with what each known mistake would produce, so the
failure names the mistake. Inputs are chosen to make each mistake visible: rows that are slices
of wider buffers, 3-D tensors that cannot be flattened without a copy, bf16 sums that round,
gate and up halves that differ, NaN just outside every buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import pytest
import torch

from tutor.harness import (
    GUARD,
    Backend,
    DrillFailure,
    Learner,
    Suspect,
    Tolerance,
    call_or_refuse,
    expect_close,
    expect_unchanged,
    guarded,
    padded_tail,
    round_to,
    row_sliced_buffer,
)
from tutor.harness import diagnoses as dx
from tutor.harness.allocations import never_written
from tutor.lang.mapwords import share

DRILL = "f3"

EPS = 1e-6
# Not a power of two, so the row's block has padded lanes; the overhang (256 - 200) stays inside
# the NaN guard (GUARD), so an unmasked store hits the guard, not the heap.
HIDDEN = 200
DTYPES = [torch.float32, torch.bfloat16]
DTYPE_IDS = ["fp32", "bf16"]

# h = x + residual is exact in fp32 for these inputs, and rounding it to the residual's dtype is
# the same on both sides, so the new residual must match to the bit (below half a bf16 ulp).
EXACT = Tolerance(atol=1e-12, rtol=2**-10)
# fp32: the kernel's sum of squares runs in another order than torch's.
NORM_FP32 = Tolerance(atol=1e-5, rtol=1e-5)
# bf16 outputs: one ulp (2**-7 relative at most) for another order of fp32 operations; the
# bit-level check in `expect_bits` then asks for more.
ONE_BF16_ULP = Tolerance(atol=1e-5, rtol=2**-7)
# silu in fp32: the kernel's sigmoid and exp may be a few fp32 ulps from torch's.
SILU_FP32 = Tolerance(atol=1e-6, rtol=1e-5)

# A correct kernel that orders its fp32 operations differently (1/sqrt or rsqrt, (h*rstd)*w or
# h*(rstd*w), another summation order) moves a result by an fp32 ulp or two; that changes its
# bf16 rounding in about one value in ten thousand. Computing the norm from the rounded residual
# changes 17-44% of the values in test_fused_add_rmsnorm_norm_uses_fp32_h, whichever way the
# backend rounds (and 3-39% on the random rows of the other tests).
ALLOWED_FLIPS = 0.01


def _tol(dtype: torch.dtype, fp32: Tolerance) -> Tolerance:
    return fp32 if dtype == torch.float32 else ONE_BF16_ULP


# ----------------------------------------------------------------------------------------------
# fused_add_rmsnorm: references and suspects
# ----------------------------------------------------------------------------------------------


def _scaled(values: torch.Tensor, stats_from: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """values * rsqrt(mean(stats_from**2) + eps) * weight, row by row, in fp32."""
    rstd = torch.rsqrt(stats_from.pow(2).mean(-1, keepdim=True) + EPS)
    return values * rstd * weight.float()


def expected_outputs(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, backend: Backend
) -> tuple[torch.Tensor, torch.Tensor]:
    """(new x, new residual) as FlashInfer computes them: the norm from the fp32 h."""
    h = x.float() + residual.float()
    return round_to(_scaled(h, h, weight), x.dtype, backend), round_to(h, residual.dtype, backend)


def rounded_h_suspects(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, backend: Backend
) -> list[Suspect]:
    """The new x if the norm used h rounded to the residual's dtype, in part or in full."""
    h = x.float() + residual.float()
    h_rounded = round_to(h, residual.dtype, backend).float()
    cases = [
        (
            h_rounded,
            h_rounded,
            "the norm of the residual as stored (h rounded to its dtype and "
            "read back), not of the fp32 h",
        ),
        (h, h_rounded, "an rstd computed from h rounded to the residual's dtype"),
        (h_rounded, h, "h rounded to the residual's dtype before it is scaled by rstd"),
    ]
    return [
        Suspect("rstd-from-rounded", round_to(_scaled(v, s, weight), x.dtype, backend), story)
        for v, s, story in cases
    ]


def reloaded_residual_suspects(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, backend: Backend
) -> list[Suspect]:
    """The new x if h went into residual in the pass that sums the squares, and the pass that
    normalizes loaded residual again: it found h there, and normalized x + h."""
    h = x.float() + residual.float()
    reloaded = x.float() + round_to(h, residual.dtype, backend).float()
    return [
        Suspect(
            "residual-reread",
            round_to(_scaled(reloaded, h, weight), x.dtype, backend),
            "x + h, normalized: h was stored into residual before the pass that normalizes, "
            "which loaded residual again and found h there instead of the old residual",
        )
    ]


def x_suspects(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, backend: Backend
) -> list[Suspect]:
    """What known mistakes make of the new x."""
    return [
        *rounded_h_suspects(x, residual, weight, backend),
        *reloaded_residual_suspects(x, residual, weight, backend),
    ]


def writeback_suspects(
    x_in: torch.Tensor, residual_in: torch.Tensor, x_out: torch.Tensor
) -> list[Suspect]:
    """The new residual if h = x + residual was not what got stored into it."""
    return [
        Suspect(
            "residual-writeback",
            residual_in,
            "the residual as it was before the call: h = x + residual was not stored into it",
        ),
        Suspect(
            "residual-writeback",
            x_in,
            "the input x: the residual must receive h = x + residual, not x",
        ),
        Suspect(
            "residual-writeback",
            x_out,
            "the normalized output: the residual must receive h = x + residual, not its norm",
        ),
    ]


# ----------------------------------------------------------------------------------------------
# Bit-level comparison of bf16 outputs
# ----------------------------------------------------------------------------------------------


def _ulp_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """How many bf16 steps lie between a and b, element by element."""

    def line(t: torch.Tensor) -> torch.Tensor:
        bits = t.contiguous().view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)  # sign-magnitude onto one line

    return (line(a) - line(b)).abs()


def _nearly_identical(ulps: torch.Tensor) -> bool:
    return int(ulps.max()) <= 1 and int((ulps > 0).sum()) <= ALLOWED_FLIPS * ulps.numel()


def expect_bits(
    actual: torch.Tensor,
    expected: torch.Tensor,
    *,
    what: str,
    suspects: Callable[[], Sequence[Suspect]],
) -> None:
    """bf16 `actual` must equal `expected` bit for bit, but for a few values one ulp away;
    `suspects` builds what known mistakes give, for a mismatch to name.

    `expect_close` cannot tell these apart: a suspect one ulp off in a fifth of the values is
    within any tolerance that lets a correct kernel through, so this counts the values instead.
    """
    ulps = _ulp_distance(actual, expected)
    if _nearly_identical(ulps):
        return
    off = int((ulps > 0).sum())
    message = (
        f"{what}: {off} of {ulps.numel()} bf16 values differ from the reference "
        f"({share(off, ulps.numel())}%), the largest by {int(ulps.max())} ulp; a correct "
        f"kernel is at most one ulp off in at most {ALLOWED_FLIPS:.0%} of them"
    )
    for suspect in suspects():
        if _nearly_identical(_ulp_distance(actual, suspect.value)):
            raise DrillFailure(suspect.diagnosis, message, suspect.details_for(what))
    raise DrillFailure(dx.MISMATCH, message)


# ----------------------------------------------------------------------------------------------
# fused_add_rmsnorm: calling it and checking what it wrote
# ----------------------------------------------------------------------------------------------


def _make_inputs(
    shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x (a sublayer's output), residual (the stream, larger) and weight, all different.

    The weight sits in a NaN-guarded buffer, so an unmasked load of it stays in the allocation.
    """
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=gen)
    residual = 4 * torch.randn(shape, generator=gen)
    weight, _ = guarded((0.5 + torch.rand(shape[-1], generator=gen)).to(device, dtype))
    return x.to(device, dtype), residual.to(device, dtype), weight


def _guards(buffer: torch.Tensor) -> torch.Tensor:
    """The NaN memory on both sides of an `guarded` tensor."""
    return torch.cat((buffer[:GUARD], buffer[-GUARD:])).clone()


# Where a test puts its values: values -> (the tensor the function gets, the buffer around it).
Layout = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def _transposed_guarded(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """[B, S, H] values stored as [S, B, H] in a NaN-guarded buffer: no view flattens them."""
    stored, buffer = guarded(values.transpose(0, 1))
    return stored.transpose(0, 1), buffer


def check_fused_outputs(
    impl: Learner,
    backend: Backend,
    x: torch.Tensor,
    residual: torch.Tensor,
    x_in: torch.Tensor,
    residual_in: torch.Tensor,
    weight: torch.Tensor,
    *,
    layouts: tuple[Layout, Layout],
    reads_guarded: bool,
) -> None:
    """x and residual after the call must hold the normalized h and h itself.

    `layouts` place x and residual as the test did, for the re-run on fp32 copies.
    """
    want_x, want_residual = expected_outputs(x_in, residual_in, weight, backend)

    def rerun_fp32() -> tuple[torch.Tensor, torch.Tensor]:
        x32, _ = layouts[0](x_in.float())
        r32, _ = layouts[1](residual_in.float())
        impl.fused_add_rmsnorm(x32, r32, guarded(weight.float())[0], EPS)
        return x32, r32

    want32 = expected_outputs(x_in.float(), residual_in.float(), weight.float(), backend)
    # The norm of the rounded h can fail the tolerance before the bit-level check below (on
    # the CPU, where both roundings truncate): the same suspects then name it here too.
    named = partial(x_suspects, x_in, residual_in, weight, backend)
    expect_close(
        x,
        want_x,
        what="x",
        tol=_tol(x.dtype, NORM_FP32),
        suspects=named,
        untouched=x_in,
        fp32_rerun=lambda: rerun_fp32()[0],
        fp32_expected=want32[0],
        reads_guarded=reads_guarded,
    )
    expect_close(
        residual,
        want_residual,
        what="residual",
        tol=EXACT,
        suspects=lambda: writeback_suspects(x_in, residual_in, want_x),
        fp32_rerun=lambda: rerun_fp32()[1],
        fp32_expected=want32[1],
        reads_guarded=reads_guarded,
    )
    if x.dtype == torch.bfloat16:
        expect_bits(x, want_x, what="x", suspects=named)


def _fused_looks_right(
    backend: Backend,
    x: torch.Tensor,
    residual: torch.Tensor,
    x_in: torch.Tensor,
    residual_in: torch.Tensor,
    weight: torch.Tensor,
) -> bool:
    """x within a bf16 ulp and residual exact: right apart from what `expect_bits` judges."""
    want_x, want_residual = expected_outputs(x_in, residual_in, weight, backend)
    tol = _tol(x.dtype, NORM_FP32)
    return torch.allclose(x.float(), want_x.float(), atol=tol.atol, rtol=tol.rtol) and bool(
        torch.equal(residual, want_residual)
    )


def _runs_correctly_on_contiguous(
    impl: Learner,
    backend: Backend,
    x_in: torch.Tensor,
    residual_in: torch.Tensor,
    weight: torch.Tensor,
) -> bool:
    """On contiguous copies in guarded buffers: right x and residual, nothing written around.

    When this holds and the same values laid out otherwise come out wrong, the layout is what
    the learner's code mishandles.
    """
    x, x_buffer = guarded(x_in)
    residual, residual_buffer = guarded(residual_in)
    guards = _guards(x_buffer), _guards(residual_buffer)
    impl.fused_add_rmsnorm(x, residual, weight, EPS)
    intact = all(
        torch.equal(_guards(b).isnan(), g.isnan())
        for b, g in zip((x_buffer, residual_buffer), guards, strict=True)
    )
    return intact and _fused_looks_right(backend, x, residual, x_in, residual_in, weight)


def _expect_written_in_place(
    x: torch.Tensor,
    residual: torch.Tensor,
    x_in: torch.Tensor,
    residual_in: torch.Tensor,
    layout: str,
) -> None:
    """A function that works on contiguous inputs must not leave strided ones unchanged."""
    stale = [
        name
        for name, after, before in (("x", x, x_in), ("residual", residual, residual_in))
        if torch.equal(after, before)
    ]
    if stale:
        raise DrillFailure(
            "view-not-reshape",
            f"on {layout}, {' and '.join(stale)} kept {'its' if len(stale) == 1 else 'their'} "
            "old values, though the same values in contiguous tensors came out right",
            "The caller's tensor never changed, so the kernel must have written somewhere else: "
            "into a copy of it.",
        )


# ----------------------------------------------------------------------------------------------
# fused_add_rmsnorm tests
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_fused_add_rmsnorm(impl, backend, device, dtype):
    """3-D inputs in NaN-guarded buffers: both tensors updated in place, nothing around them."""
    x_in, residual_in, weight = _make_inputs((2, 3, HIDDEN), dtype, device, seed=0)
    x, x_buffer = guarded(x_in)
    residual, residual_buffer = guarded(residual_in)
    guards = {"x": _guards(x_buffer), "residual": _guards(residual_buffer)}

    impl.fused_add_rmsnorm(x, residual, weight, EPS)

    for name, buffer in (("x", x_buffer), ("residual", residual_buffer)):
        expect_unchanged(_guards(buffer), guards[name], what=name)
    check_fused_outputs(
        impl,
        backend,
        x,
        residual,
        x_in,
        residual_in,
        weight,
        layouts=(guarded, guarded),
        reads_guarded=True,
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_fused_add_rmsnorm_row_stride(impl, backend, device, dtype):
    """Rows that are slices of wider buffers (x and residual with different row strides)."""
    x_in, residual_in, weight = _make_inputs((2, 2, HIDDEN), dtype, device, seed=1)
    x, x_buffer = row_sliced_buffer(x_in, slack=7)
    residual, residual_buffer = row_sliced_buffer(residual_in, slack=3)
    outside = {"x": x_buffer.isnan(), "residual": residual_buffer.isnan()}  # slack and guards
    works_contiguous = _runs_correctly_on_contiguous(impl, backend, x_in, residual_in, weight)

    impl.fused_add_rmsnorm(x, residual, weight, EPS)

    if works_contiguous:
        _expect_written_in_place(x, residual, x_in, residual_in, "row-sliced inputs")
        if not _fused_looks_right(backend, x, residual, x_in, residual_in, weight):
            raise DrillFailure(
                "row-stride",
                f"x or residual is wrong when rows are {HIDDEN + 7} and {HIDDEN + 3} elements "
                f"apart in memory, though the same values in contiguous rows ({HIDDEN} apart) "
                "came out right",
                "Rows of a sliced tensor are not H apart in memory, and x and residual can "
                "each have their own spacing.",
            )
    for name, buffer in (("x", x_buffer), ("residual", residual_buffer)):
        expect_unchanged(
            buffer[outside[name]],
            torch.full_like(buffer[outside[name]], torch.nan),
            what=f"the rows of {name}",
        )
    check_fused_outputs(
        impl,
        backend,
        x,
        residual,
        x_in,
        residual_in,
        weight,
        layouts=(lambda v: row_sliced_buffer(v, 7), lambda v: row_sliced_buffer(v, 3)),
        reads_guarded=True,
    )


@pytest.mark.parametrize("transposed", ["x", "residual"])
def test_fused_add_rmsnorm_not_flattenable(impl, backend, device, transposed):
    """A 3-D tensor that no view can flatten: update it in place, or refuse it with an error.

    torch.randn(S, B, H).transpose(0, 1) has no [B*S, H] view. Raising (as .view does) and
    writing the caller's tensor correctly are both fine; returning as if it had worked while
    the caller's tensor keeps its old values is the mistake.
    """
    x_in, residual_in, weight = _make_inputs((2, 3, HIDDEN), torch.bfloat16, device, seed=2)
    layouts = (
        _transposed_guarded if transposed == "x" else guarded,
        _transposed_guarded if transposed == "residual" else guarded,
    )
    x, _ = layouts[0](x_in)
    residual, _ = layouts[1](residual_in)
    works_contiguous = _runs_correctly_on_contiguous(impl, backend, x_in, residual_in, weight)

    if call_or_refuse(impl, "fused_add_rmsnorm", x, residual, weight, EPS):
        return
    if works_contiguous:
        _expect_written_in_place(x, residual, x_in, residual_in, f"a transposed 3-D {transposed}")
    check_fused_outputs(
        impl, backend, x, residual, x_in, residual_in, weight, layouts=layouts, reads_guarded=True
    )


def test_fused_add_rmsnorm_norm_uses_fp32_h(impl, backend, device):
    """bf16 sums that round: the norm must come from the fp32 h, not from the rounded residual.

    Rows 0-1 are random, so rounding h moves each value by a random fraction of an ulp. In rows
    2-3 every h lies 15/32 of an ulp past a bf16 value and rounds down on both backends, so the
    rounded residual is smaller in every element and an rstd computed from it is too large.
    """
    gen = torch.Generator().manual_seed(3)
    x_rand = torch.randn(2, HIDDEN, generator=gen)
    residual_rand = 4 * torch.randn(2, HIDDEN, generator=gen)
    sign = torch.where(torch.rand(2, HIDDEN, generator=gen) < 0.5, -1.0, 1.0)
    # |residual| in [2, 3.5) and |x| < 0.125: every |h| stays in [2, 4), where the ulp is 2**-6.
    residual_biased = sign * (2 + 1.5 * torch.rand(2, HIDDEN, generator=gen)).bfloat16().float()
    steps = torch.randint(0, 8, (2, HIDDEN), generator=gen).float()
    x_biased = sign * (32 * steps + 15) * 2.0**-11  # exact in bf16; 15/32 of the ulp at [2, 4)
    x_in = torch.cat((x_rand, x_biased)).to(device, torch.bfloat16)
    residual_in = torch.cat((residual_rand, residual_biased)).to(device, torch.bfloat16)
    weight, _ = guarded((0.5 + torch.rand(HIDDEN, generator=gen)).to(device, torch.bfloat16))
    x, _ = guarded(x_in)
    residual, _ = guarded(residual_in)

    impl.fused_add_rmsnorm(x, residual, weight, EPS)

    check_fused_outputs(
        impl,
        backend,
        x,
        residual,
        x_in,
        residual_in,
        weight,
        layouts=(guarded, guarded),
        reads_guarded=True,
    )


def test_fused_add_rmsnorm_residual_read_back(impl, backend, device):
    """Every h rounds back to the residual it started from: the norm must still use the fp32 h.

    |x| is 15/32 of an ulp of |residual| or less, so h = x + residual rounds (down, on both
    backends) to the old residual. A kernel that stores the rounded h and loads residual back
    for the norm then reads the same bits whenever its load lands: before its own store (the
    GPU may reorder them without a barrier) or after it (the CPU interpreter, in order). The
    verdict for that kernel is the same on both.
    """
    gen = torch.Generator().manual_seed(6)
    sign = torch.where(torch.rand(4, HIDDEN, generator=gen) < 0.5, -1.0, 1.0)
    # |residual| in [2, 3.5): ulp 2**-6; |x| = k * 2**-11 with k in 0..15 stays below half of
    # it and is exact in bf16. Rounding moves h by 0 to 15/32 of an ulp: a different fraction
    # of each value, so the rounded row is not the fp32 row scaled (which the norm would undo).
    residual_rows = sign * (2 + 1.5 * torch.rand(4, HIDDEN, generator=gen)).bfloat16().float()
    fraction = torch.randint(0, 16, (4, HIDDEN), generator=gen).float()
    x_rows = sign * fraction * 2.0**-11
    x_in = x_rows.to(device, torch.bfloat16)
    residual_in = residual_rows.to(device, torch.bfloat16)
    weight, _ = guarded((0.5 + torch.rand(HIDDEN, generator=gen)).to(device, torch.bfloat16))
    x, _ = guarded(x_in)
    residual, _ = guarded(residual_in)

    impl.fused_add_rmsnorm(x, residual, weight, EPS)

    check_fused_outputs(
        impl,
        backend,
        x,
        residual,
        x_in,
        residual_in,
        weight,
        layouts=(guarded, guarded),
        reads_guarded=True,
    )


# ----------------------------------------------------------------------------------------------
# silu_and_mul
# ----------------------------------------------------------------------------------------------


def _silu_block(d: int) -> int:
    return min(1024, 1 << (d - 1).bit_length())


def silu_and_mul_fp32(x: torch.Tensor, silu_of: str = "gate", times: str = "up") -> torch.Tensor:
    """silu(one half) * (one half) in fp32; the reference is silu(gate) * up."""
    d = x.shape[-1] // 2
    halves = {"gate": x[..., :d].float(), "up": x[..., d:].float()}
    return torch.nn.functional.silu(halves[silu_of]) * halves[times]


def gate_up_suspects(x: torch.Tensor, backend: Backend) -> list[Suspect]:
    d = x.shape[-1] // 2
    gate, up = x[..., :d].float(), x[..., d:].float()
    cases = [
        (
            silu_and_mul_fp32(x, "up", "gate"),
            "silu(up) * gate: the halves swapped (the first "
            "half is the gate, the one that goes through silu)",
        ),
        (silu_and_mul_fp32(x, "gate", "gate"), "silu(gate) * gate: the up half was never read"),
        (silu_and_mul_fp32(x, "up", "up"), "silu(up) * up: the gate half was never read"),
        (gate * torch.sigmoid(up) * up, "gate * sigmoid(up) * up: sigmoid of the wrong half"),
    ]
    return [Suspect("gate-up-order", round_to(v, x.dtype, backend), story) for v, story in cases]


SILU_SHAPES = {
    "rows3-d37": (3, 2 * 37),  # one column block per row, most of it padding
    "rows2-d2000": (2, 2 * 2000),  # two column blocks per row, the second partly filled
    "3d-d50": (2, 2, 2 * 50),  # leading dims to flatten
}


MIN_BLOCK = 16  # no column block is narrower (a block of tl.arange is a power of two)


def _expect_every_column_block(out: torch.Tensor, want: torch.Tensor, tol: Tolerance) -> None:
    """Right in each row's first block of columns, never written after it: the grid's 2nd axis.

    The block is the learner's, read off the output: every row right up to the same column,
    a power of two, and wrong somewhere after it (one program per row, or every program of a
    row at its first block)."""
    if out.shape != want.shape or out.dtype != want.dtype:
        return  # expect_close names these
    d = want.shape[-1]
    right = torch.isclose(out.float(), want.float(), atol=tol.atol, rtol=tol.rtol).reshape(-1, d)
    wrong_anywhere = (~right).any(0)
    if not wrong_anywhere.any():
        return
    block = int(wrong_anywhere.int().argmax())  # the first column wrong in some row
    if block < MIN_BLOCK or block & (block - 1) or not bool((~right[:, block:]).any(1).all()):
        return
    # The later columns never written: no program stored there (a load that forgot its block
    # offset writes every column, wrongly, and is not this mistake).
    if not bool(never_written(out.detach()).reshape(-1, d)[:, block:][~right[:, block:]].all()):
        return
    raise DrillFailure(
        "column-blocks",
        f"out is right in columns 0-{block - 1} of every row but wrong from column {block} "
        f"on ({int((~right[:, block:]).sum())} values)",
        f"Each row has d = {d} outputs, more than one block of {block} covers.",
    )


def _silu_looks_right(out: object, x_in: torch.Tensor, backend: Backend) -> bool:
    want = round_to(silu_and_mul_fp32(x_in), x_in.dtype, backend)
    tol = _tol(x_in.dtype, SILU_FP32)
    return (
        isinstance(out, torch.Tensor)
        and out.shape == want.shape
        and out.dtype == want.dtype
        and torch.allclose(out.float(), want.float(), atol=tol.atol, rtol=tol.rtol)
    )


@pytest.mark.parametrize("shape", list(SILU_SHAPES.values()), ids=list(SILU_SHAPES))
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_silu_and_mul(impl, backend, device, dtype, shape):
    """out = silu(gate) * up from a NaN-guarded input; gate and up have different values."""
    gen = torch.Generator().manual_seed(4)
    x_in = (2 * torch.randn(shape, generator=gen)).to(device, dtype)
    x, _ = guarded(x_in)
    d = shape[-1] // 2
    block = _silu_block(d)

    out = impl.silu_and_mul(x)

    want = round_to(silu_and_mul_fp32(x_in), dtype, backend)
    tail = None
    if d > block:
        _expect_every_column_block(out, want, _tol(dtype, SILU_FP32))
        tail = padded_tail(d, block, want.shape, device)
    expect_close(
        out,
        want,
        what="out",
        tol=_tol(dtype, SILU_FP32),
        suspects=lambda: gate_up_suspects(x_in, backend),
        fp32_rerun=lambda: impl.silu_and_mul(guarded(x_in.float())[0]),
        fp32_expected=silu_and_mul_fp32(x_in),
        reads_guarded=True,
        tail=tail,
    )


def test_silu_and_mul_row_stride(impl, backend, device):
    """Rows that are slices of a wider buffer; the input itself must not change."""
    gen = torch.Generator().manual_seed(5)
    x_in = (2 * torch.randn(3, 2 * 37, generator=gen)).to(device, torch.bfloat16)
    x, buffer = row_sliced_buffer(x_in, slack=5)
    buffer_before = buffer.clone()
    works_contiguous = _silu_looks_right(impl.silu_and_mul(guarded(x_in)[0]), x_in, backend)

    out = impl.silu_and_mul(x)

    if works_contiguous and not _silu_looks_right(out, x_in, backend):
        raise DrillFailure(
            "row-stride",
            f"out is wrong when the rows of x are {2 * 37 + 5} elements apart in memory, though "
            f"the same values in contiguous rows ({2 * 37} apart) came out right",
            "Rows of a sliced tensor are not 2d apart in memory.",
        )
    expect_unchanged(buffer, buffer_before, what="the input x")
    expect_close(
        out,
        round_to(silu_and_mul_fp32(x_in), x.dtype, backend),
        what="out",
        tol=ONE_BF16_ULP,
        suspects=lambda: gate_up_suspects(x_in, backend),
        reads_guarded=True,
    )
