"""Tests for drill B2: RMSNorm backward (dx row by row, dw reduced across all rows).

References are computed here in fp64 from exactly the values the kernel loads, then rounded
the way the backend rounds. dx is checked first, against dx without the mean term and dx with
rstd recomputed from x; then dw, against dw with rstd recomputed, and then by asking WHICH rows
it sums: each row's contribution dy[r] * x_hat[r] is a random vector of N > M entries, so
least squares recovers the weight of every row in the learner's dw. One row of each program's
group is a dw that kept one row instead of adding them (dw-one-row); anything else short of
every row is programs' partials lost to each other (dw-race): one program's group, a single
row, or rows with no pattern.

Races are told from what both backends show. The CPU interpreter runs programs one after
another, so the last program's partial is what remains; on the GPU they run at once, and how
many rows a program gets depends on the number of SMs (one each, for these small M): the
winner is any row, any subset, or a different row in different columns, and can change from
run to run. Each of those is dw-race; only one row from each of several groups is dw-one-row.
Then: dw off by a multiple of the fill value of new memory is a partial row never written (a
program with no rows that skipped its store); dw that is the sum of partials rounded to x's
dtype kept the partial rows in bf16.

rstd is computed with eps = 1e-2 while the rows have a mean square of about 1e-2: a kernel that
recomputes it (with any small eps, from the rounded x or not) is off by about 40%.
"""

from __future__ import annotations

import math
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
    learner,
    round_to,
    row_sliced,
    story_text,
)
from tutor.harness import diagnoses as dx
from tutor.harness.allocations import SENTINEL, empty_as_zeros

DRILL = "b2"

FORWARD_EPS = 1e-2  # what rstd was computed with; the kernel is never told
LEARNER_EPS = (1e-5, 1e-6, 0.0)  # what a kernel that recomputes rstd would use instead

DW_RACE = "dw-race"
DW_ONE_ROW = "dw-one-row"
DX_CORRECTION = "dx-correction"
RSTD_RECOMPUTED = "rstd-recomputed"
PARTIAL_DTYPE = "partial-dtype"
PARTIAL_UNWRITTEN = "partial-unwritten"
DIVIDE_BY_BLOCK = "divide-by-block"

# fp32 dx: rstd is about 7 here, so dx is up to ~30; the kernel's row sum runs in another order
# than the fp64 reference (a few fp32 ulps of the sum, times rstd). Every suspect is >10% off.
DX_FP32 = Tolerance(atol=1e-4, rtol=1e-5)
# bf16 dx: the kernel's fp32 value and the reference differ in the last fp32 bits, which can
# move the final rounding by one bf16 ulp (2**-7 relative at most).
DX_BF16 = Tolerance(atol=1e-3, rtol=2**-7)
# fp32 dw: a sum of M products of size ~1-10, in any order (per-program partials, then torch.sum).
DW_FP32 = Tolerance(atol=1e-4, rtol=1e-5)
# bf16 dw: one bf16 ulp of the rounded sum.
DW_BF16 = Tolerance(atol=1e-3, rtol=2**-7)


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def _inputs(m: int, n: int, seed: int) -> tuple[torch.Tensor, ...]:
    """dy, x, weight (fp32) and rstd (from eps = 1e-2, in fp32).

    x has a root mean square of about 0.1 (mean square 1e-2, the size of eps), so recomputing
    rstd with a small eps changes it by ~40%. dy leans on x_hat, so mean(dy * w * x_hat) is
    around 0.5 and the mean term is a large part of dx."""
    gen = torch.Generator().manual_seed(seed)
    x = 0.1 * torch.randn((m, n), generator=gen) * (1.0 + torch.rand((m, 1), generator=gen))
    weight = 1.0 + 0.5 * torch.randn(n, generator=gen)
    dy = 0.5 * x / x.pow(2).mean(-1, keepdim=True).sqrt() + torch.randn((m, n), generator=gen)
    return dy, x, weight, _rstd(x, FORWARD_EPS)


def _rstd(x: torch.Tensor, eps: float) -> torch.Tensor:
    return (1.0 / torch.sqrt(x.double().pow(2).mean(-1) + eps)).float()


def _on(device: str, dtype: torch.dtype, *tensors: torch.Tensor) -> list[torch.Tensor]:
    """Each tensor in dtype on device, inside a buffer with NaN on both sides."""
    return [guarded(t.to(device=device, dtype=dtype))[0] for t in tensors]


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake computes instead
# ----------------------------------------------------------------------------------------------


def _terms(dy, x, w, rstd):
    """x_hat and dy * w in fp64, and each row's contribution to dw."""
    x_hat = x.double() * rstd.double()[:, None]
    wdy = dy.double() * w.double()
    return x_hat, wdy, dy.double() * x_hat


def reference_dx(dy, x, w, rstd, correction: bool = True, count: int | None = None):
    """dx in fp64; `count`: what the row's sum for the mean term is divided by (N unless a
    mistake divides by the block)."""
    x_hat, wdy, _ = _terms(dy, x, w, rstd)
    n = count or x.shape[-1]
    c = (wdy * x_hat).sum(-1, keepdim=True) / n if correction else 0.0
    return rstd.double()[:, None] * (wdy - x_hat * c)


def _blocks_for(n: int) -> list[int]:
    """The power-of-two blocks a kernel may hold a row of n in: the next one, and two wider."""
    first = 1 << (n - 1).bit_length()
    return [first, 2 * first, 4 * first]


def reference_dw(dy, x, w, rstd) -> torch.Tensor:
    return _terms(dy, x, w, rstd)[2].sum(0)


def _recomputed(x: torch.Tensor) -> list[tuple[float, torch.Tensor]]:
    return [(eps, _rstd(x, eps).to(x.device)) for eps in LEARNER_EPS]


def _out(impl, dy, x, w, rstd) -> tuple[torch.Tensor, torch.Tensor]:
    out = impl.rms_norm_backward(dy, x, w, rstd)
    if not (isinstance(out, tuple | list) and len(out) == 2):
        raise DrillFailure(
            dx.WRONG_SHAPE,
            f"rms_norm_backward should return (dx, dw), got {type(out).__name__}",
            "Return the two tensors as a tuple: dx like x, dw like weight.",
        )
    return out[0], out[1]


def expect_backward(
    impl,
    dy,
    x,
    w,
    rstd,
    backend: Backend,
    fp32_rerun=None,
    row_stride_x: torch.Tensor | None = None,
) -> None:
    got_dx, got_dw = _out(impl, dy, x, w, rstd)
    programs = learner.last_call.programs  # before any re-run
    # each launch's program count: a grid-stride kernel's P, where each program keeps a row
    grids = [math.prod(launch.grid) for launch in learner.last_call.launches if launch.grid]
    bf16 = x.dtype != torch.float32

    def dx_suspects() -> list[Suspect]:
        found = [
            Suspect(
                DX_CORRECTION,
                round_to(reference_dx(dy, x, w, rstd, False), x.dtype, backend),
                "rstd * dy * w: dx without the - x_hat * mean(dy * w * x_hat) term",
            )
        ]
        found += [
            Suspect(
                DIVIDE_BY_BLOCK,
                round_to(reference_dx(dy, x, w, rstd, count=block), x.dtype, backend),
                f"dx with the mean term's sum divided by BLOCK_N = {block} instead of "
                f"N = {x.shape[-1]}",
            )
            for block in _blocks_for(x.shape[-1])
            if block != x.shape[-1]
        ]
        found += [
            Suspect(
                RSTD_RECOMPUTED,
                round_to(reference_dx(dy, x, w, r), x.dtype, backend),
                f"dx with rstd recomputed from x with eps = {eps:g}, not the rstd you were given",
            )
            for eps, r in _recomputed(x)
        ]
        if row_stride_x is not None:
            found.append(
                Suspect(
                    dx.ROW_STRIDE,
                    round_to(reference_dx(dy, row_stride_x, w, rstd), x.dtype, backend),
                    "dx computed from rows of x read N elements apart: the row stride is not N "
                    "here",
                )
            )
        return found

    want_dx = reference_dx(dy, x, w, rstd)
    expect_close(
        got_dx,
        round_to(want_dx, x.dtype, backend),
        what="dx",
        tol=DX_BF16 if bf16 else DX_FP32,
        suspects=dx_suspects,
        reads_guarded=True,
        fp32_rerun=(lambda: fp32_rerun()[0]) if fp32_rerun else None,
        fp32_expected=want_dx.float(),
    )

    dw_tol = DW_FP32 if w.dtype == torch.float32 else DW_BF16
    want_dw = round_to(reference_dw(dy, x, w, rstd), w.dtype, backend)

    def dw_suspects() -> list[Suspect]:
        return [
            Suspect(
                RSTD_RECOMPUTED,
                round_to(reference_dw(dy, x, w, r), w.dtype, backend),
                f"dw with rstd recomputed from x with eps = {eps:g}",
            )
            for eps, r in _recomputed(x)
        ]

    try:
        expect_close(
            got_dw, want_dw, what="dw", tol=dw_tol, suspects=dw_suspects, reads_guarded=True
        )
    except DrillFailure as failure:
        if failure.diagnosis != dx.MISMATCH:
            raise
        if not backend.is_cpu:  # the interpreter runs programs in order: always the same dw
            _varies_between_runs(got_dw, lambda: _out(impl, dy, x, w, rstd)[1], dw_tol, failure)
        _which_rows(got_dw, dy, x, w, rstd, programs, failure, grids)
        _one_row_per_column(got_dw, dy, x, w, rstd, dw_tol, failure)

        def rows_named(written: torch.Tensor, unwritten: int, named=failure) -> None:
            _which_rows(written, dy, x, w, rstd, programs, named, grids, unwritten)
            _one_row_per_column(written, dy, x, w, rstd, dw_tol, named, unwritten)

        _partials_unwritten(
            got_dw, want_dw, dw_tol, failure, lambda: _out(impl, dy, x, w, rstd)[1], rows_named
        )
        _partials_rounded(got_dw, dy, x, w, rstd, backend, dw_tol, failure)
        raise


def _varies_between_runs(got_dw, run_again, tol: Tolerance, failure: DrillFailure) -> None:
    """Name dw-race when the same call on the same inputs gives another dw (by more than the
    tolerance, which atomics' reordering stays within): the order programs ran in decided it."""
    for _ in range(2):
        again = run_again()
        if isinstance(again, torch.Tensor) and again.shape == got_dw.shape:
            if not torch.allclose(
                again.float(), got_dw.float(), atol=tol.atol, rtol=tol.rtol, equal_nan=True
            ):
                raise failure.renamed(
                    DW_RACE,
                    "The same call on the same inputs gave another dw: which programs' partials "
                    "survive depends on the order they ran in. Several programs store (or "
                    "load, add and store) into the same place at once.",
                ) from None


def _renamed(failure: DrillFailure, diagnosis: str, story: str, unwritten: int) -> DrillFailure:
    """`failure` named `diagnosis` with `story` as its evidence, and, when `unwritten` rows of
    the partial buffer were summed unwritten too, a sentence that says so."""
    if not unwritten:
        return failure.renamed(diagnosis, story)
    note = (
        f"Besides, {unwritten} row(s) of the partial buffer from torch.empty were summed "
        f"without ever being written: dw is also off by {unwritten} x {SENTINEL:g}, the fill "
        "value of new memory."
    )
    return failure.renamed(
        diagnosis, f"{story_text.text(story)} {story_text.text(note)}", harness=True
    )


def _which_rows(
    got_dw,
    dy,
    x,
    w,
    rstd,
    programs: int | None,
    failure: DrillFailure,
    grids: list[int],
    unwritten: int = 0,
) -> None:
    """Name dw-race or dw-one-row when dw is the sum of some rows' contributions only.

    `programs`: how many programs the call launched, all kernels together; `grids`: how many
    each launch asked for, in launch order (the first is the kernel over the rows);
    `unwritten`: rows of the partial buffer summed unwritten, already taken out of `got_dw`.
    """
    parts = _terms(dy.cpu(), x.cpu(), w.cpu(), rstd.cpu())[2]  # [M, N], one row per row of x
    m, n = parts.shape
    if n < 2 * m or not torch.isfinite(got_dw).all():
        return
    coef = torch.linalg.lstsq(parts.T, got_dw.double().cpu()[:, None]).solution[:, 0]
    counted = coef.round()
    fits = (coef - counted).abs().max() < 0.05 and ((counted == 0) | (counted == 1)).all()
    rows = [int(r) for r in torch.nonzero(counted).flatten()]
    if not fits or not rows or len(rows) == m:
        return
    listed = ", ".join(str(r) for r in rows[:12]) + (", ..." if len(rows) > 12 else "")
    if len(rows) == 1:
        if rows[0] in (0, m - 1) and programs is not None and programs < m:
            # Too few programs for one per row: a loop kept the first or last row it saw.
            raise _renamed(
                failure,
                DW_ONE_ROW,
                f"Your dw counts only row {rows[0]} of {m}: a loop over the rows replaced its "
                "sum with each row's dy * x_hat instead of adding it.",
                unwritten,
            ) from None
        # On the GPU, programs that each have one row leave any one of them as the winner.
        raise _renamed(
            failure,
            DW_RACE,
            f"Your dw is row {rows[0]}'s contribution only, of {m}: every program stored its "
            "dw to the same place and the last one to write won (or one loop over all the "
            "rows replaced its sum with each row instead of adding it).",
            unwritten,
        ) from None
    last = len(rows)
    if rows == list(range(m - last, m)) and last in grids and -(-m // last) != last:
        # The last P rows, P a launch's program count, and not the size of a contiguous group
        # of rows of P programs: each program of a grid-stride loop (rows p, p + P, ...) kept
        # the last row it saw, and stored its own partial.
        raise _renamed(
            failure,
            DW_ONE_ROW,
            f"Your dw counts only rows {listed} of {m}: the last row each of your {last} "
            "programs handled (rows p, p + P, ...). Each program replaced its sum with each "
            "row's dy * x_hat instead of adding it.",
            unwritten,
        ) from None
    if rows == list(range(rows[0], rows[-1] + 1)):
        if grids and grids[0] > 1 and len(rows) > -(-m // grids[0]):
            # More rows than one program of the row kernel takes: several programs' partials
            # survived, so none was overwritten; their sum left some out (no named mistake).
            return
        raise _renamed(
            failure,
            DW_RACE,
            f"Your dw is the sum over rows {rows[0]}..{rows[-1]} only, of {m}: one program's "
            "partial. The other programs' partials were overwritten: every program stored its "
            "dw to the same place, and the last one to write won.",
            unwritten,
        ) from None
    step = rows[1] - rows[0]
    strided = rows == list(range(rows[0], m, step))
    if strided and rows[-1] != m - 1:
        # Every step-th row from rows[0] to the end: one program of a grid-stride loop (rows p,
        # p + P, ...). The last row of each contiguous group would include row m - 1.
        raise _renamed(
            failure,
            DW_RACE,
            f"Your dw is the sum over rows {listed} only (one row in {step}), of {m}: the "
            "partial of one program that takes rows p, p + P, .... The other programs' partials "
            "were overwritten: every program stored its dw to the same place, and the last one "
            "to write won.",
            unwritten,
        ) from None
    if strided or _one_per_group(rows, m):
        raise _renamed(
            failure,
            DW_ONE_ROW,
            f"Your dw counts only rows {listed} of {m}: one row per program instead of the sum "
            "of dy * x_hat over every row the program handles (the accumulator is overwritten "
            "or reset at each row)."
            + (
                f" One row in {step} is also what one program's partial holds if programs "
                "take rows p, p + P, ... and all store their partials to the same place."
                if strided
                else ""
            ),
            unwritten,
        ) from None
    raise _renamed(
        failure,
        DW_RACE,
        f"Your dw counts only rows {listed} of {m}, not one row of each program's group: the "
        "other rows' partials were lost. Several programs stored (or loaded, added and "
        "stored) into the same place at once, and some writes overwrote others.",
        unwritten,
    ) from None


def _one_per_group(rows: list[int], m: int) -> bool:
    """Whether `rows` are the last (or the first) row of each group of k >= 2 rows, the last
    group shorter: what programs that keep one row of their contiguous group add up to."""
    for k in range(2, (m + 1) // 2 + 1):
        starts = range(0, m, k)
        if len(starts) != len(rows):
            continue
        if rows == [min(s + k, m) - 1 for s in starts] or rows == list(starts):
            return True
    return False


def _one_row_per_column(
    got_dw, dy, x, w, rstd, tol: Tolerance, failure: DrillFailure, unwritten: int = 0
) -> None:
    """Name dw-race when each column of dw is one row's contribution, from different rows in
    different columns: programs that each had one row overwrote each other chunk by chunk."""
    parts = _terms(dy.cpu(), x.cpu(), w.cpu(), rstd.cpu())[2].float()
    got = got_dw.float().cpu()
    near = (parts - got).abs() <= tol.atol + tol.rtol * got.abs()  # [M, N]
    matched = near.any(dim=0)
    if matched.float().mean() < 0.9:
        return
    winners = {int(near[:, c].nonzero()[0]) for c in torch.nonzero(matched).flatten()[:64]}
    if len(winners) < 2:
        return
    raise _renamed(
        failure,
        DW_RACE,
        f"Each column of your dw is one row's contribution, from {len(winners)} or more "
        "different rows in different columns: programs stored their dw to the same place at "
        "the same time, and in each column another one was last.",
        unwritten,
    ) from None


def _partials_unwritten(
    got_dw,
    want_dw,
    tol: Tolerance,
    failure: DrillFailure,
    run_again: Callable[[], object],
    rows_named: Callable[[torch.Tensor, int], None],
) -> None:
    """Name partial-unwritten when dw is off by the same multiple of the fill value of new
    memory in every column, and right when the same call (`run_again`) gets zeros from
    torch.empty: rows of a partial buffer from torch.empty were summed unwritten. When that dw
    is still wrong, it is named as a buffer of zeros would have it named (`rows_named(that dw,
    the count of unwritten rows)`: every program storing into the same row reads the same from
    torch.empty as from torch.zeros), or left a mismatch."""
    times = (got_dw.double() - want_dw.double()) / SENTINEL
    count = times.round()
    if not bool(torch.isfinite(times).all()) or not bool((count == count[0]).all()):
        return
    rows = int(count[0])
    if rows < 1:
        return
    with empty_as_zeros():
        written = run_again()
    if not isinstance(written, torch.Tensor) or written.shape != want_dw.shape:
        return
    if not torch.allclose(written.float(), want_dw.float(), atol=tol.atol, rtol=tol.rtol):
        rows_named(written, rows)
        return
    raise failure.renamed(
        PARTIAL_UNWRITTEN,
        f"Your dw is off by {rows} x {SENTINEL:g} in every column, and {SENTINEL:g} is what "
        f"the test fills new memory with: {rows} row(s) of the partial buffer from torch.empty "
        "were summed without ever being written. A program whose group of rows is empty must "
        "still store its (zero) partial, or the buffer must start at zero.",
    ) from None


def _partials_rounded(got_dw, dy, x, w, rstd, backend, tol: Tolerance, failure) -> None:
    """Name partial-dtype when dw is the sum of program partials each rounded to x's dtype.

    The grouping is the learner's: contiguous groups of k rows, or rows p, p + P, ... of a
    grid-stride loop; each is tried, with the sum itself kept, rounded by torch, or rounded by
    a kernel. It must fit clearly better than the reference: an order of summation can flip a
    rounding now and then, so a few values may be one partial's ulp off.
    """
    if x.dtype == torch.float32:
        return
    parts = _terms(dy, x, w, rstd)[2]  # fp64 [M, N]
    m = parts.shape[0]
    got = got_dw.double()

    def far(value: torch.Tensor) -> int:
        return int(((got - value).abs() > tol.atol + tol.rtol * value.abs()).sum())

    wrong = far(reference_dw(dy, x, w, rstd))
    groupings = [[list(range(s, min(s + k, m))) for s in range(0, m, k)] for k in range(1, m)]
    groupings += [[list(range(p, m, step)) for p in range(step)] for step in range(2, m)]
    for groups in groupings:
        partials = torch.stack([parts[g].sum(0) for g in groups])
        total = round_to(partials.float(), x.dtype, backend).double().sum(0)
        ulp = partials.abs().amax(0) * 2.0**-7 + tol.atol  # one ulp of the largest partial
        for summed in (total, total.to(x.dtype), round_to(total, x.dtype, backend)):
            summed = summed.double()
            misses = far(summed)
            if misses * 4 <= wrong and misses <= 0.02 * got.numel():
                if bool(((got - summed).abs() <= ulp).all()):
                    raise failure.renamed(
                        PARTIAL_DTYPE,
                        f"Your dw is the sum of {len(groups)} partials each rounded to "
                        f"{str(x.dtype).removeprefix('torch.')}: the partial-dw rows were kept "
                        "in x's dtype. Each holds a sum of many rows; keep it in float32 until "
                        "the final sum.",
                    ) from None


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------

# N is never a power of two and N >= 2M, so each row's share of dw can be told apart. M is
# larger than the number of programs a kernel uses on the CPU, so each program has several rows.
CASES = [
    pytest.param(24, 100, torch.float32, torch.float32, id="24x100-fp32"),
    pytest.param(20, 300, torch.bfloat16, torch.bfloat16, id="20x300-bf16"),
    pytest.param(14, 77, torch.bfloat16, torch.float32, id="14x77-bf16-fp32-weight"),
    # More rows than a GPU kernel's programs (two per SM is 264 on an H200), so there too each
    # program has several rows: with one row each, overwriting dw instead of adding looks right.
    # No more than that: the CPU interpreter's time goes by rows (600 rows took 0.9 s of b2's
    # 1.3 s there).
    pytest.param(300, 610, torch.float32, torch.float32, id="300x610-fp32-many-rows"),
]


@pytest.mark.parametrize(("m", "n", "dtype", "w_dtype"), CASES)
def test_backward_matches_reference(impl, backend, m, n, dtype, w_dtype):
    dy32, x32, w32, rstd = _inputs(m, n, seed=m + n)
    dy, x = _on(backend.device, dtype, dy32, x32)
    (w,) = _on(backend.device, w_dtype, w32)
    (rstd,) = _on(backend.device, torch.float32, rstd)

    def rerun():
        dyf, xf = _on(backend.device, torch.float32, dy, x)
        (wf,) = _on(backend.device, torch.float32, w)
        return _out(impl, dyf, xf, wf, rstd)

    expect_backward(impl, dy, x, w, rstd, backend, fp32_rerun=rerun)


def test_few_rows(impl, backend):
    """3 rows: fewer rows than programs a kernel may launch; empty programs must add nothing."""
    dy32, x32, w32, rstd = _inputs(3, 50, seed=3)
    dy, x, w, rstd = _on(backend.device, torch.float32, dy32, x32, w32, rstd)
    expect_backward(impl, dy, x, w, rstd, backend)


def test_row_sliced_input(impl, backend):
    """fp32 rows of x and dy 100 + 32 apart in memory (slices of wider rows)."""
    m, n, slack = 8, 100, 32
    dy32, x32, w32, rstd32 = _inputs(m, n, seed=8)
    x, base = row_sliced(x32.to(backend.device), slack=slack)
    dy, _ = row_sliced(dy32.to(backend.device), slack=slack)
    w, rstd = _on(backend.device, torch.float32, w32, rstd32)
    flat = base.reshape(-1)[: m * n].reshape(m, n)  # rows of x read N apart
    expect_backward(impl, dy, x, w, rstd, backend, row_stride_x=flat)
