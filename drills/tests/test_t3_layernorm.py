"""Tests for drill T3: LayerNorm (with its mean and rstd) and RMSNorm forward.

References are computed here in fp64 from exactly the values the kernel loads, then rounded the
way the backend rounds. On a mismatch each output is compared with what the classic mistakes
would produce on the same inputs (suspects): padded lanes counted in the variance, a sum
divided by BLOCK_N, the variance divided by N - 1, the one-pass E[x^2] - E[x]^2, statistics
stored in the input's dtype, eps added outside the square root, y without the weight or the
bias, and layer_norm's three outputs returned in another order. The inputs make each mistake
visible: N is never a power of two, rows have a non-zero mean, one case has a mean of thousands
with a spread below one, one has rows whose variance is far below eps, and every tensor sits
next to NaN so a load without a mask shows.

Choices: `weight-not-applied` is one id for y missing the weight, the bias or both (the affine
step left unfinished, one ladder covers it); `outputs-swapped` is named when the three outputs,
taken in some other order, match the reference.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache
from typing import NamedTuple

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
from tutor.harness.inputs import same_layout

DRILL = "t3"

STATS_DTYPE = "stats-dtype"
EPS_OUTSIDE = "eps-outside-sqrt"
OUTPUTS_SWAPPED = "outputs-swapped"
NO_WEIGHT = "weight-not-applied"
ROW_STRIDE = "row-stride"
ROW_STRIDE_STORY = "what rows read N elements apart would give: the row stride is not N here"

# mean and rstd are fp32 reductions over at most a few thousand values, from the same values
# the reference uses (bf16 converts to fp32 exactly): any summation order is good to about
# 1e-6 relative, and every suspect below moves them by 2e-4 or more.
STATS_TOL = Tolerance(atol=1e-6, rtol=1e-5)
# fp32 y = (x - mean) * rstd * w + b carries the stats' error plus a few fp32 roundings.
FP32_TOL = Tolerance(atol=1e-5, rtol=1e-5)
# bf16 y: the kernel's fp32 y and the reference's differ in the last fp32 bits, which can move
# the final rounding by one bf16 ulp (at most 2**-7 relative).
BF16_TOL = Tolerance(atol=1e-5, rtol=2**-7)
# Rows with a mean of 4096 and x - mean of 0.5: one fp32 ulp of the mean (4.9e-4) is 1e-3 of
# x - mean. A correct kernel whose partial means round (a blocked Welford does) is a few such
# ulps off in y, and about 1e-5 off in rstd. The one-pass variance moves rstd 100-fold and y by
# more than 100; the N - 1 variance moves rstd by 5e-3.
LARGE_MEAN_STATS_TOL = Tolerance(atol=1e-6, rtol=3e-4)
LARGE_MEAN_Y_TOL = Tolerance(atol=5e-3, rtol=1e-5)


def _tol(dtype: torch.dtype) -> Tolerance:
    return FP32_TOL if dtype == torch.float32 else BF16_TOL


def _block(n: int) -> int:
    """BLOCK_N as the kernel picks it: the power of two at or above N."""
    return 1 << (n - 1).bit_length()


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def _offset_rows(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """randn + 3 in fp32: a mean of 3 makes the padding and BLOCK_N mistakes show."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=gen) + 3.0


def _params(n: int, seed: int, with_bias: bool = True) -> tuple[torch.Tensor, ...]:
    """weight around 1 and bias around 0, random so that swapping or dropping them shows."""
    gen = torch.Generator().manual_seed(seed + 1000)
    weight = 1.0 + 0.5 * torch.randn(n, generator=gen)
    bias = 0.5 * torch.randn(n, generator=gen)
    return (weight, bias) if with_bias else (weight,)


def _large_mean_rows(n_rows: int, n: int, seed: int) -> torch.Tensor:
    """Rows c + d, with c one of +-2048, +-4096 and d one of -c/8192, 0, +c/8192.

    Each row has as many +d as -d, so its mean is exactly c and its variance about d^2 * 2/3.
    x and x^2 are exact in fp32 except that x^2 loses its d^2 term, which is exactly where the
    variance lives: (4096.5)^2 = 16781312.25 rounds to 16781312. Every partial sum of x and of
    fl(x^2) is then a multiple of a power of two small enough to be exact in any order, so the
    one-pass E[x^2] - E[x]^2 is exactly 0 on every backend while the two-pass variance is right.
    """
    gen = torch.Generator().manual_seed(seed)
    centres = [4096.0, -2048.0, 2048.0, -4096.0]
    rows = []
    for r in range(n_rows):
        centre = centres[r % len(centres)]
        step = abs(centre) / 8192
        k = n // 3
        offsets = torch.tensor([step] * k + [-step] * k + [0.0] * (n - 2 * k))
        rows.append(centre + offsets[torch.randperm(n, generator=gen)])
    return torch.stack(rows)


def _tiny_variance_rows(n_rows: int, n: int, seed: int) -> torch.Tensor:
    """Rows of spread 1e-3 around 0 (variance ~1e-6, a tenth of eps = 1e-5), every other row
    spread 1e-4. rstd = 1/sqrt(var + eps) is then set by eps: 1/(sqrt(var) + eps) is 3 to 30
    times larger. The mean is near 0, so fp32 x - mean loses nothing."""
    gen = torch.Generator().manual_seed(seed)
    scale = torch.tensor([1e-3, 1e-4]).repeat(n_rows)[:n_rows, None]
    return scale * torch.randn(n_rows, n, generator=gen)


def _on(device: str, dtype: torch.dtype, *tensors: torch.Tensor) -> list[torch.Tensor]:
    """Each tensor in dtype on device, inside a buffer with NaN on both sides."""
    return [guarded(t.to(device=device, dtype=dtype))[0] for t in tensors]


# ----------------------------------------------------------------------------------------------
# LayerNorm: the reference and what each mistake computes instead
# ----------------------------------------------------------------------------------------------


class Norm(NamedTuple):
    y: torch.Tensor
    mean: torch.Tensor
    rstd: torch.Tensor


def _one_pass_var(x: torch.Tensor) -> torch.Tensor:
    """E[x^2] - E[x]^2 with fp32 sums, as a kernel computes it (the cancellation included)."""
    xf = x.float()
    n = x.shape[-1]
    mean = xf.sum(-1) / n
    return (xf * xf).sum(-1) / n - mean * mean


def layer_norm_fp64(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float, mistake: str | None = None
) -> Norm:
    """y, mean and rstd in fp64; `mistake` names what a buggy kernel computes instead."""
    n, block = x.shape[-1], _block(x.shape[-1])
    xd = x.double()
    mean = xd.sum(-1) / (block if mistake in ("mean/block", "both/block") else n)
    xc = xd - mean[..., None]
    squares = (xc * xc).sum(-1)
    if mistake in ("var/block", "both/block"):
        var = squares / block
    elif mistake == "unbiased":
        var = squares / (n - 1)
    elif mistake == "padding":
        # Each padded lane holds 0, so its x - mean is -mean: (BLOCK_N - N) * mean^2 extra.
        var = (squares + (block - n) * mean * mean) / n
    elif mistake == "one-pass":
        var = _one_pass_var(x).double()
    else:
        var = squares / n
    if mistake == "eps-outside":
        rstd = 1.0 / (torch.sqrt(var) + eps)
    elif mistake == "eps-after-rsqrt":
        rstd = 1.0 / torch.sqrt(var) + eps
    else:
        rstd = 1.0 / torch.sqrt(var + eps)
    weight = 1.0 if mistake in ("no-weight", "no-affine") else w.double()
    bias = 0.0 if mistake in ("no-bias", "no-affine") else b.double()
    y = xc * rstd[..., None] * weight + bias
    return Norm(y, mean.reshape(-1), rstd.reshape(-1))


LN_MISTAKES = [
    (
        "padding-where",
        "padding",
        "the variance with each padded lane's (0 - mean)^2 added in (x - mean not zeroed there)",
    ),
    ("divide-by-block", "mean/block", "the mean taken as sum(x) / BLOCK_N instead of / N"),
    (
        "divide-by-block",
        "var/block",
        "the variance taken as sum((x - mean)^2) / BLOCK_N instead of / N",
    ),
    ("divide-by-block", "both/block", "the mean and the variance both divided by BLOCK_N, not N"),
    ("unbiased-variance", "unbiased", "the variance divided by N - 1 instead of N"),
    (
        "one-pass-variance",
        "one-pass",
        "the variance as E[x^2] - E[x]^2 in fp32, which cancels when the mean is large",
    ),
    (EPS_OUTSIDE, "eps-outside", "rstd as 1 / (sqrt(var) + eps): eps belongs under the root"),
    (EPS_OUTSIDE, "eps-after-rsqrt", "rstd as rsqrt(var) + eps: eps belongs under the root"),
    (NO_WEIGHT, "no-weight", "(x - mean) * rstd + bias: y without the weight"),
    (NO_WEIGHT, "no-bias", "(x - mean) * rstd * weight: y without the bias"),
    (NO_WEIGHT, "no-affine", "(x - mean) * rstd: y without the weight and the bias"),
]


def _layer_norm_out(impl, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> Norm:
    out = impl.layer_norm(x, w, b, eps)
    if not (isinstance(out, tuple | list) and len(out) == 3):
        raise DrillFailure(
            dx.WRONG_SHAPE,
            f"layer_norm should return (y, mean, rstd), got {type(out).__name__}",
            "Return the three tensors as a tuple: y like x, mean and rstd as float32 [M].",
        )
    return Norm(*out)


def expect_layer_norm(
    got: Norm,
    x: torch.Tensor,
    w: torch.Tensor,
    b: torch.Tensor,
    eps: float,
    backend: Backend,
    fp32_rerun: Callable[[], torch.Tensor] | None = None,
    suspects_from: torch.Tensor | None = None,
    stats_tol: Tolerance = STATS_TOL,
    y_tol: Tolerance | None = None,
) -> None:
    """Check y, mean and rstd, naming a known mistake when one explains the output.

    For fp32 inputs the statistics go first: they are the sharpest evidence. For bf16 inputs y
    goes first, because only y can be re-run on fp32 inputs to tell bf16 arithmetic apart.
    `suspects_from`: the rows a kernel would read with the wrong row stride; their norms are
    offered as `row-stride` suspects.
    """
    ref = layer_norm_fp64(x, w, b, eps)

    @cache
    def wrong() -> list[tuple[str, Norm, str]]:
        """What each mistake gives, built once, and only for an output that needs naming."""
        found = [(d, layer_norm_fp64(x, w, b, eps, m), story) for d, m, story in LN_MISTAKES]
        if suspects_from is not None:
            found.append((ROW_STRIDE, layer_norm_fp64(suspects_from, w, b, eps), ROW_STRIDE_STORY))
        return found

    def check_y() -> None:
        expect_close(
            got.y,
            round_to(ref.y, x.dtype, backend),
            what="y",
            tol=y_tol or _tol(x.dtype),
            suspects=lambda: [
                Suspect(d, round_to(s.y, x.dtype, backend), story) for d, s, story in wrong()
            ],
            fp32_rerun=fp32_rerun,
            fp32_expected=ref.y.float(),
            reads_guarded=True,
        )

    def check_stats() -> None:
        for what in ("mean", "rstd"):
            expect_close(
                getattr(got, what),
                getattr(ref, what).float(),
                what=what,
                tol=stats_tol,
                suspects=lambda what=what: [
                    Suspect(d, getattr(s, what).float(), story) for d, s, story in wrong()
                ],
                dtype_diagnosis=STATS_DTYPE,
                reads_guarded=True,
            )

    checks = (check_stats, check_y) if x.dtype == torch.float32 else (check_y, check_stats)
    try:
        for check in checks:
            check()
    except DrillFailure as failure:
        _name_swapped_outputs(got, ref, x.dtype, backend, stats_tol, y_tol or _tol(x.dtype))
        raise failure


def _name_swapped_outputs(
    got: Norm, ref: Norm, dtype: torch.dtype, backend: Backend, stats_tol: Tolerance, y_tol
) -> None:
    """Raise `outputs-swapped` if the three outputs, in some other order, are all right."""
    wants = [
        (round_to(ref.y, dtype, backend), y_tol),
        (ref.mean.float(), stats_tol),
        (ref.rstd.float(), stats_tol),
    ]

    def close(value, want: torch.Tensor, tol: Tolerance) -> bool:
        return (
            isinstance(value, torch.Tensor)
            and tuple(value.shape) == tuple(want.shape)
            and torch.allclose(value.detach().float(), want.float(), atol=tol.atol, rtol=tol.rtol)
        )

    names = ("y", "mean", "rstd")
    for order in itertools.permutations(range(3)):
        if order == (0, 1, 2):
            continue
        # got[i] is what the learner returned in place i; it should be output order[i].
        if all(close(got[i], *wants[order[i]]) for i in range(3)):
            returned = ", ".join(names[k] for k in order)
            raise DrillFailure(
                OUTPUTS_SWAPPED,
                f"layer_norm returned ({returned}): the right values in the wrong order",
                "The tests unpack y, mean, rstd = layer_norm(x, weight, bias, eps): return "
                "them in that order.",
            )


def _fp32_rerun(impl, eps: float, *tensors: torch.Tensor) -> Callable[[], torch.Tensor]:
    """layer_norm's y on fp32 copies of the inputs, laid out (strides, guards) like them."""
    return lambda: _layer_norm_out(impl, *[same_layout(t, torch.float32) for t in tensors], eps).y


# ----------------------------------------------------------------------------------------------
# LayerNorm tests
# ----------------------------------------------------------------------------------------------

# N is never a power of two. For bf16, y is checked first (see expect_layer_norm), so N must
# not put a suspect within a few bf16 ulps of the reference, where it could neither be named
# nor ruled out: N = 100 or 1000 would (N/(N-1) or BLOCK_N/N within 1%). With N = 2500 and
# N = 9 each suspect is either many ulps away or so close that only the fp32 stats see it.
LN_CASES = [
    pytest.param((4, 100), torch.float32, 1e-5, id="4x100-fp32"),
    pytest.param((3, 1000), torch.float32, 1e-3, id="3x1000-fp32-eps1e-3"),
    pytest.param((2, 3, 33), torch.float32, 1e-5, id="2x3x33-fp32"),
    pytest.param((3, 2500), torch.bfloat16, 1e-5, id="3x2500-bf16"),
    pytest.param((2, 3, 9), torch.bfloat16, 1e-5, id="2x3x9-bf16"),
]


@pytest.mark.parametrize(("shape", "dtype", "eps"), LN_CASES)
def test_layer_norm_matches_reference(impl, backend, shape, dtype, eps):
    values = _offset_rows(shape, seed=sum(shape))
    # A constant row: variance 0, so rstd = 1/sqrt(eps). Zero, because the GPU's fp32 division
    # is approximate: sum(c)/N can miss c by an ulp, which rstd (316 for eps = 1e-5) magnifies
    # far past any tolerance, in a correct kernel as much as in the reference's own rounding.
    values[(0,) * (len(shape) - 1)] = 0.0
    x, w, b = _on(backend.device, dtype, values, *_params(shape[-1], seed=len(shape)))
    got = _layer_norm_out(impl, x, w, b, eps)
    expect_layer_norm(got, x, w, b, eps, backend, fp32_rerun=_fp32_rerun(impl, eps, x, w, b))


def test_layer_norm_stats_are_float32_per_row(impl, backend):
    """mean and rstd are float32 of shape [M], whatever x's dtype and however many dims it has.

    Only the contract is checked here; their values are checked in every other test.
    """
    shape, n_rows = (2, 2, 9), 4
    x, w, b = _on(backend.device, torch.bfloat16, _offset_rows(shape, seed=7), *_params(9, seed=7))
    got = _layer_norm_out(impl, x, w, b, 1e-5)
    for what in ("mean", "rstd"):
        stat = getattr(got, what)
        if not isinstance(stat, torch.Tensor) or tuple(stat.shape) != (n_rows,):
            found = tuple(stat.shape) if isinstance(stat, torch.Tensor) else type(stat).__name__
            raise DrillFailure(
                dx.WRONG_SHAPE, f"{what} is {found}, expected shape ({n_rows},): one value per row"
            )
        if stat.dtype != torch.float32:
            raise DrillFailure(
                STATS_DTYPE,
                f"{what} has dtype {stat.dtype}, expected float32",
                "The statistics stay float32 for bf16 inputs: a backward pass "
                "needs their precision.",
            )


def test_layer_norm_row_sliced_input(impl, backend):
    """Rows that sit N + slack apart in memory (a slice of wider rows), 3-D."""
    shape, n = (2, 3, 100), 100
    slack = _block(n) - n + 4  # the last row's padded lanes stay inside the buffer (NaN there)
    x, base = row_sliced(_offset_rows(shape, seed=11).to(backend.device), slack=slack)
    w, b = _on(backend.device, torch.float32, *_params(n, seed=11))
    # What a kernel reading row r at r * N (ignoring the stride) would normalise.
    flat = base.reshape(-1)[: x.numel()].reshape(shape)
    got = _layer_norm_out(impl, x, w, b, 1e-5)
    expect_layer_norm(got, x, w, b, 1e-5, backend, suspects_from=flat)


def test_layer_norm_large_mean_small_spread(impl, backend):
    """Means of 2048-4096 with a spread of a fraction of one: where E[x^2] - E[x]^2 cancels.

    The same rows centred at 0 come first, as a control. A kernel that is right on them but wrong
    once they are shifted by thousands has lost the variance to cancellation: the one-pass
    formula, whatever exact garbage it produces on a given backend (on the GPU, fused
    multiply-adds change which bits survive, so its output cannot be predicted bit for bit).
    """
    rows = _large_mean_rows(4, 100, seed=5)
    centred = rows - rows.double().mean(-1, keepdim=True).float()  # exact: the means are c
    params = _params(100, seed=5)
    xc, wc, bc = _on(backend.device, torch.float32, centred, *params)
    expect_layer_norm(_layer_norm_out(impl, xc, wc, bc, 1e-5), xc, wc, bc, 1e-5, backend)

    x, w, b = _on(backend.device, torch.float32, rows, *params)
    got = _layer_norm_out(impl, x, w, b, 1e-5)
    try:
        expect_layer_norm(
            got, x, w, b, 1e-5, backend, stats_tol=LARGE_MEAN_STATS_TOL, y_tol=LARGE_MEAN_Y_TOL
        )
    except DrillFailure as failure:
        if failure.diagnosis not in (dx.MISMATCH, dx.NAN_OR_INF):
            raise
        raise failure.renamed(
            "one-pass-variance",
            "The same rows centred at 0 came out right: only the shift by thousands breaks "
            "the statistics, which is cancellation in the variance.",
        ) from None


def test_layer_norm_tiny_variance(impl, backend):
    """Rows whose variance (1e-6, 1e-8) is far below eps = 1e-5: eps decides rstd there."""
    rows = _tiny_variance_rows(4, 100, seed=17)
    x, w, b = _on(backend.device, torch.float32, rows, *_params(100, seed=17))
    got = _layer_norm_out(impl, x, w, b, 1e-5)
    expect_layer_norm(got, x, w, b, 1e-5, backend)


# ----------------------------------------------------------------------------------------------
# RMSNorm
# ----------------------------------------------------------------------------------------------


def rms_norm_fp64(
    x: torch.Tensor,
    w: torch.Tensor,
    eps: float,
    divisor: int | None = None,
    mistake: str | None = None,
):
    """x / sqrt(sum(x^2) / divisor + eps) * w in fp64; the divisor is N unless a mistake says,
    and `mistake` ("eps-outside", "no-weight", "padding-ones") names what else a buggy kernel
    computes."""
    xd = x.double()
    squares = (xd * xd).sum(-1, keepdim=True)
    if mistake == "padding-ones":
        # each padded lane loaded as 1.0 (a "neutral" other=) adds 1^2 to the sum of squares
        squares = squares + (_block(x.shape[-1]) - x.shape[-1])
    mean_sq = squares / (divisor or x.shape[-1])
    if mistake == "eps-outside":
        rstd = 1.0 / (torch.sqrt(mean_sq) + eps)
    elif mistake == "eps-after-rsqrt":
        rstd = 1.0 / torch.sqrt(mean_sq) + eps
    else:
        rstd = 1.0 / torch.sqrt(mean_sq + eps)
    return xd * rstd * (1.0 if mistake == "no-weight" else w.double())


def expect_rms_norm(y, x, w, eps, backend, fp32_rerun=None, suspects_from=None) -> None:
    n = x.shape[-1]
    ref = rms_norm_fp64(x, w, eps)

    def suspects() -> list[Suspect]:
        found = [
            Suspect(
                "divide-by-block",
                round_to(rms_norm_fp64(x, w, eps, _block(n)), x.dtype, backend),
                "the mean of squares taken as sum(x^2) / BLOCK_N instead of / N",
            ),
            Suspect(
                EPS_OUTSIDE,
                round_to(rms_norm_fp64(x, w, eps, mistake="eps-outside"), x.dtype, backend),
                "x / (sqrt(mean(x^2)) + eps) * weight: eps belongs under the root",
            ),
            Suspect(
                EPS_OUTSIDE,
                round_to(rms_norm_fp64(x, w, eps, mistake="eps-after-rsqrt"), x.dtype, backend),
                "x * (rsqrt(mean(x^2)) + eps) * weight: eps belongs under the root",
            ),
            Suspect(
                NO_WEIGHT,
                round_to(rms_norm_fp64(x, w, eps, mistake="no-weight"), x.dtype, backend),
                "x / sqrt(mean(x^2) + eps): y without the weight",
            ),
            Suspect(
                "padding-where",
                round_to(rms_norm_fp64(x, w, eps, mistake="padding-ones"), x.dtype, backend),
                "the mean of squares with each padded lane loaded as 1.0 adding 1 to it "
                "(other=1.0 where 0 belongs)",
            ),
        ]
        if suspects_from is not None:
            found.append(
                Suspect(
                    ROW_STRIDE,
                    round_to(rms_norm_fp64(suspects_from, w, eps), x.dtype, backend),
                    ROW_STRIDE_STORY,
                )
            )
        return found

    expect_close(
        y,
        round_to(ref, x.dtype, backend),
        what="y",
        tol=_tol(x.dtype),
        suspects=suspects,
        fp32_rerun=fp32_rerun,
        fp32_expected=ref.float(),
        reads_guarded=True,
    )


def _rms_rerun(impl, eps: float, x: torch.Tensor, w: torch.Tensor):
    """rms_norm on fp32 copies laid out (strides, guards) like the originals."""
    return lambda: impl.rms_norm(same_layout(x, torch.float32), same_layout(w, torch.float32), eps)


# bf16 N = 100 and 33: BLOCK_N / N is 1.28 and 1.94, far from 1 in bf16 ulps.
RMS_CASES = [
    pytest.param((4, 100), torch.float32, id="4x100-fp32"),
    pytest.param((3, 1000), torch.float32, id="3x1000-fp32"),
    pytest.param((4, 100), torch.bfloat16, id="4x100-bf16"),
    pytest.param((2, 3, 33), torch.bfloat16, id="2x3x33-bf16"),
]


@pytest.mark.parametrize(("shape", "dtype"), RMS_CASES)
def test_rms_norm_matches_reference(impl, backend, shape, dtype):
    eps = 1e-6
    x, w = _on(
        backend.device,
        dtype,
        _offset_rows(shape, seed=sum(shape) + 1),
        *_params(shape[-1], seed=3, with_bias=False),
    )
    y = impl.rms_norm(x, w, eps)
    expect_rms_norm(y, x, w, eps, backend, fp32_rerun=_rms_rerun(impl, eps, x, w))


def test_rms_norm_row_sliced_input(impl, backend):
    """bf16 rows N + slack apart in memory, 3-D."""
    shape, n, eps = (2, 2, 100), 100, 1e-6
    slack = _block(n) - n + 4
    x, base = row_sliced(
        _offset_rows(shape, seed=13).to(backend.device, torch.bfloat16), slack=slack
    )
    (w,) = _on(backend.device, torch.bfloat16, *_params(n, seed=13, with_bias=False))
    flat = base.reshape(-1)[: x.numel()].reshape(shape)
    y = impl.rms_norm(x, w, eps)
    expect_rms_norm(
        y, x, w, eps, backend, fp32_rerun=_rms_rerun(impl, eps, x, w), suspects_from=flat
    )


def test_rms_norm_tiny_rms(impl, backend):
    """Rows whose mean square (1e-6, 1e-8) is near or below eps = 1e-6: eps decides rstd."""
    eps = 1e-6
    rows = _tiny_variance_rows(4, 100, seed=19)
    x, w = _on(backend.device, torch.float32, rows, *_params(100, seed=19, with_bias=False))
    y = impl.rms_norm(x, w, eps)
    expect_rms_norm(y, x, w, eps, backend)
