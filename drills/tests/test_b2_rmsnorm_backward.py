"""Tests for drill B2: RMSNorm backward (dx row by row, dw reduced across all rows).

References are computed here in fp64 from exactly the values the kernel loads, then rounded
the way the backend rounds. dx is checked first, against dx without the mean term and dx with
rstd recomputed from x; then dw, against dw with rstd recomputed, and then by asking WHICH rows
it sums: each row's contribution dy[r] * x_hat[r] is a random vector of N > M entries, so
least squares recovers the weight of every row in the learner's dw. A contiguous group of
rows only is one program's partial (the others were overwritten: a race); one row only, or one
row per group, is a dw that kept one row instead of adding them.

rstd is computed with eps = 1e-2 while the rows have a mean square of about 1e-2: a kernel that
recomputes it (with any small eps, from the rounded x or not) is off by about 40%.
"""

from __future__ import annotations

import pytest
import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    expect_close,
    guarded,
    round_to,
    row_sliced,
)
from tutor.harness import diagnoses as dx

DRILL = "b2"

FORWARD_EPS = 1e-2  # what rstd was computed with; the kernel is never told
LEARNER_EPS = (1e-5, 1e-6, 0.0)  # what a kernel that recomputes rstd would use instead

DW_RACE = "dw-race"
DW_ONE_ROW = "dw-one-row"
DX_CORRECTION = "dx-correction"
RSTD_RECOMPUTED = "rstd-recomputed"

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


def reference_dx(dy, x, w, rstd, correction: bool = True) -> torch.Tensor:
    x_hat, wdy, _ = _terms(dy, x, w, rstd)
    c = (wdy * x_hat).mean(-1, keepdim=True) if correction else 0.0
    return rstd.double()[:, None] * (wdy - x_hat * c)


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
    bf16 = x.dtype != torch.float32

    dx_suspects = [
        Suspect(
            DX_CORRECTION,
            round_to(reference_dx(dy, x, w, rstd, False), x.dtype, backend),
            "rstd * dy * w: dx without the - x_hat * mean(dy * w * x_hat) term",
        )
    ]
    dx_suspects += [
        Suspect(
            RSTD_RECOMPUTED,
            round_to(reference_dx(dy, x, w, r), x.dtype, backend),
            f"dx with rstd recomputed from x with eps = {eps:g}, not the rstd you were given",
        )
        for eps, r in _recomputed(x)
    ]
    if row_stride_x is not None:
        dx_suspects.append(
            Suspect(
                dx.ROW_STRIDE,
                round_to(reference_dx(dy, row_stride_x, w, rstd), x.dtype, backend),
                "dx computed from rows of x read N elements apart: the row stride is not N here",
            )
        )
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
    dw_suspects = [
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
        _which_rows(got_dw, dy, x, w, rstd, failure)
        raise


def _which_rows(got_dw, dy, x, w, rstd, failure: DrillFailure) -> None:
    """Name dw-race or dw-one-row when dw is the sum of some rows' contributions only."""
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
    if len(rows) > 1 and rows == list(range(rows[0], rows[-1] + 1)):
        raise failure.renamed(
            DW_RACE,
            f"Your dw is the sum over rows {rows[0]}..{rows[-1]} only, of {m}: one program's "
            "partial. The other programs' partials were overwritten: every program stored its "
            "dw to the same place, and the last one to write won.",
        ) from None
    step = rows[1] - rows[0] if len(rows) > 1 else 0
    strided = step > 1 and rows == list(range(rows[0], m, step))
    if strided and rows[-1] != m - 1:
        # Every step-th row from rows[0] to the end: one program of a grid-stride loop (rows p,
        # p + P, ...). The last row of each contiguous group would include row m - 1.
        raise failure.renamed(
            DW_RACE,
            f"Your dw is the sum over rows {listed} only (every {step}th row), of {m}: the "
            "partial of one program that takes rows p, p + P, .... The other programs' partials "
            "were overwritten: every program stored its dw to the same place, and the last one "
            "to write won.",
        ) from None
    raise failure.renamed(
        DW_ONE_ROW,
        f"Your dw counts only row(s) {listed} of {m}: one row per program instead of the sum "
        "of dy * x_hat over every row the program handles (or, if each program has one row, "
        "all of them stored to the same place and the last one won)."
        + (
            f" Every {step}th row is also what one program's partial holds if programs take "
            "rows p, p + P, ... and all store their partials to the same place."
            if strided
            else ""
        ),
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
    pytest.param(600, 1250, torch.float32, torch.float32, id="600x1250-fp32-many-rows"),
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
