"""Tests for drill f5: `cross_entropy(logits, target, ignore_index)` -> (loss, dlogits).

References are computed here in fp64 from exactly the values the kernel loads. On a mismatch
each output is compared with what the classic mistakes would produce on the same inputs:

- `vocab-padding`: the padded lanes of the last block loaded as 0 add exp(0) each to the sum.
  The test cannot see BLOCK_V, so there is one suspect per power-of-two block from 16 to 65536;
  V is odd, so every one of them has a partial last block. The ordinary rows sit near
  -ln(V) - 2, where sum(exp(x)) is about 1: a single padded exp(0) doubles it.
- `ignore-index-mean`: the loss and the gradient divided by T instead of the counted rows.
- `grad-scale`: the gradient not divided by the counted rows at all.
- `grad-target`: softmax / n with the one-hot subtracted nowhere or at other columns than the
  target (read from the output: whatever was subtracted, it was 1/n at columns that are not
  the target's).
- `no-max-subtraction`: the same rows shifted by +-200 (cross-entropy does not change when a
  row is shifted) must give the same answers; exp(200) is inf and exp(-200) is 0 in fp32.
- `max-floor`: of those shifted rows, only the ones shifted down go wrong: the max subtracted
  never goes below 0 (it starts at 0, or padded lanes join it as 0).
- `ignored-grad`: every counted row of dlogits right and the ignored rows not 0: their zero
  gradient was never stored (they hold the fill value of new memory, or the logits the buffer
  was copied from).

Inputs sit in NaN guards, so a load without a mask reads NaN (`missing-mask`); the learner's
allocations sit between sentinels, so a store past the end is caught too.
"""

from __future__ import annotations

import math
from functools import cache
from typing import NamedTuple

import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    expect_close,
    guarded,
    round_to,
)
from tutor.harness import diagnoses as dx
from tutor.harness.allocations import never_written

DRILL = "f5"

VOCAB_PADDING = "vocab-padding"
IGNORE_INDEX_MEAN = "ignore-index-mean"
GRAD_SCALE = "grad-scale"
NO_MAX_SUBTRACTION = "no-max-subtraction"
MAX_FLOOR = "max-floor"
GRAD_TARGET = "grad-target"
IGNORED_GRAD = "ignored-grad"

BLOCKS = [1 << k for k in range(4, 17)]  # every BLOCK_V a kernel might pick, 16 to 65536

# The loss is a mean of per-row values of 5-15, each an fp32 logsumexp of a few thousand terms
# (any summation order, the GPU's approximate exp and log: a few 1e-7 relative). Every suspect
# moves it by 0.1 or more.
LOSS_TOL = Tolerance(atol=1e-5, rtol=1e-5)
# fp32 dlogits: p = exp(x - lse) carries lse's rounding times |x - lse| < 30, about 3e-6
# relative; the atol covers values near 0 only (the smallest here are about 1e-9).
FP32_TOL = Tolerance(atol=1e-10, rtol=1e-5)
# bf16 dlogits: the reference is rounded as the backend rounds, but the kernel's fp32 value
# may sit on the other side of a rounding boundary: one bf16 ulp is at most 2**-7 relative.
BF16_TOL = Tolerance(atol=1e-10, rtol=2**-7)
# Logits near +-200 in fp32: lse ~ 200 rounds to 1.5e-5 (an ulp of 200), which moves every p
# by up to 3e-5 relative, and the loss lse - x[target] by up to 3e-5 absolute.
SHIFTED_LOSS_TOL = Tolerance(atol=1e-4, rtol=1e-5)
SHIFTED_TOL = Tolerance(atol=1e-10, rtol=1e-4)
SHIFT = 200.0


def _tol(dtype: torch.dtype) -> Tolerance:
    return FP32_TOL if dtype == torch.float32 else BF16_TOL


# ----------------------------------------------------------------------------------------------
# The reference, and what each mistake computes instead
# ----------------------------------------------------------------------------------------------


class CrossEntropy(NamedTuple):
    loss: torch.Tensor  # 0-dim float32
    dlogits: torch.Tensor  # [T, V] float32 (rounded to logits' dtype by the caller)


def cross_entropy_fp64(
    logits: torch.Tensor,
    target: torch.Tensor,
    ignore_index: int,
    *,
    pad: int = 0,
    divisor: str = "counted",
    scale_grad: bool = True,
    one_hot: bool = True,
) -> CrossEntropy:
    """loss and dlogits in fp64 from the values the kernel loads.

    pad: lanes of 0 that join each row's logsumexp (vocab-padding); divisor: "counted" rows or
    all "rows" (ignore-index-mean); scale_grad=False leaves the gradient undivided
    (grad-scale); one_hot=False subtracts no one-hot (grad-target).
    """
    x = logits.detach().double().cpu()
    tgt = target.cpu()
    counted = tgt != ignore_index
    n = int(counted.sum()) if divisor == "counted" else tgt.shape[0]
    lse = torch.logsumexp(x, dim=-1)
    if pad:
        lse = torch.logaddexp(lse, torch.tensor(math.log(pad), dtype=torch.float64))
    safe = torch.where(counted, tgt, 0)
    picked = x.gather(1, safe[:, None])[:, 0]
    row_loss = torch.where(counted, lse - picked, 0.0)
    loss = row_loss.sum() / n if n else row_loss.sum()  # no counted row: 0
    grad = torch.exp(x - lse[:, None])
    if one_hot:
        grad[torch.arange(x.shape[0]), safe] -= 1.0
    if scale_grad and n:
        grad = grad / n
    grad = torch.where(counted[:, None], grad, 0.0)
    device = logits.device
    return CrossEntropy(loss.float().to(device), grad.float().to(device))


def _pads(n_cols: int) -> list[int]:
    """The padded lanes of the last block, for every block size in BLOCKS (distinct, > 0)."""
    return sorted({-n_cols % block for block in BLOCKS} - {0})


def mistakes(logits, target, ignore_index) -> list[tuple[str, CrossEntropy, str]]:
    """(diagnosis, what the outputs would be, story) for each suspect."""
    found = [
        (
            VOCAB_PADDING,
            cross_entropy_fp64(logits, target, ignore_index, pad=pad),
            f"a logsumexp with {pad} padded lanes loaded as 0 in it: each adds exp(0) to the sum",
        )
        for pad in _pads(logits.shape[-1])
    ]
    found += [
        (
            IGNORE_INDEX_MEAN,
            cross_entropy_fp64(logits, target, ignore_index, divisor="rows"),
            "the mean taken over all T rows, the ignored ones included, instead of the counted "
            "rows",
        ),
        (
            GRAD_SCALE,
            cross_entropy_fp64(logits, target, ignore_index, scale_grad=False),
            "softmax - onehot without the division by the number of counted rows",
        ),
        (
            GRAD_TARGET,
            cross_entropy_fp64(logits, target, ignore_index, one_hot=False),
            "softmax / n_valid with no one-hot subtracted at the target column",
        ),
    ]
    return found


def _misplaced_one_hot(
    got: torch.Tensor, logits: torch.Tensor, target: torch.Tensor, ignore_index: int
) -> str | None:
    """If got is softmax / n minus a one-hot that is misplaced or wrongly weighted, say how;
    else None.

    What the kernel subtracted, in units of 1/n, is (softmax / n - got) * n: the one-hot itself
    when the kernel is right. A misplaced one-hot leaves 0 or 1 in every lane, in the wrong ones;
    a wrongly weighted one leaves the same k != 1 at every target column (-1 when it is added,
    n when it is not divided by n) and 0 elsewhere.
    """
    tgt = target.cpu()
    counted = tgt != ignore_index
    n = int(counted.sum())
    g = got.detach().double().cpu()
    if n == 0 or not torch.isfinite(g).all() or g[~counted].any():
        return None
    x = logits.detach().double().cpu()[counted]
    subtracted = (torch.softmax(x, dim=-1) / n - g[counted]) * n
    at_target = torch.zeros_like(subtracted, dtype=torch.bool)
    at_target[torch.arange(at_target.shape[0]), tgt[counted]] = True
    weight = subtracted[at_target]
    if (
        subtracted[~at_target].abs().max() <= 0.1
        and (weight - weight.mean()).abs().max() <= 0.1
        and abs(float(weight.mean()) - 1.0) > 0.1
    ):
        k = float(weight.mean())
        why = (
            "it is added, not subtracted"
            if abs(k + 1.0) <= 0.1
            else f"the 1 is not divided by n = {n} like the softmax"
            if abs(k - n) <= 0.1 * n
            else "its weight is wrong"
        )
        return (
            f"The one-hot sits at column target[row] in every counted row, but what the "
            f"kernel subtracts there is {k:.3g} / n instead of 1 / n: {why}. The gradient is "
            "(softmax - onehot) / n, both terms divided by n."
        )
    ones = subtracted.round()
    if (subtracted - ones).abs().max() > 0.1 or not ((ones == 0) | (ones == 1)).all():
        return None
    want = torch.zeros_like(ones)
    want[torch.arange(want.shape[0]), tgt[counted]] = 1.0
    if torch.equal(ones, want):
        return None
    rows = counted.nonzero()[:, 0].tolist()
    misplaced = [(row, ones[i].nonzero()[:, 0].tolist()) for i, row in enumerate(rows)]
    misplaced = [(row, cols) for row, cols in misplaced if cols != [int(tgt[row])]]
    row, cols = max(misplaced, key=lambda found: len(found[1]) > 0)  # a misplaced one first
    where = (
        "nowhere"
        if not cols
        else "at column(s) " + ", ".join(map(str, cols[:4])) + (", ..." if len(cols) > 4 else "")
    )
    return (
        f"Row {row} (target {int(tgt[row])}) had the one-hot subtracted {where}: "
        "softmax / n is right, but -1 / n belongs at column target[row] and only there "
        "(compare the global column index, start + lane, with it)."
    )


def _wrong_only_at_targets(
    got: torch.Tensor,
    want: torch.Tensor,
    target: torch.Tensor,
    ignore_index: int,
    tol: Tolerance,
) -> str | None:
    """If dlogits is wrong at the target columns of counted rows and nowhere else, say so (the
    softmax term is right; the one-hot term is not, whatever it was written as); else None."""
    if got.shape != want.shape or got.dim() != 2:
        return None
    g, w = got.detach().double().cpu(), want.detach().double().cpu()
    wrong = ~torch.isclose(g, w, atol=tol.atol, rtol=tol.rtol)
    tgt = target.cpu()
    counted = (tgt != ignore_index).nonzero()[:, 0]
    at_target = torch.zeros_like(wrong)
    at_target[counted, tgt[counted]] = True
    if not wrong.any() or bool((wrong & ~at_target).any()):
        return None
    row = int(wrong.any(1).nonzero()[0])
    col = int(tgt[row])
    return (
        f"dlogits is wrong only at column target[row], in {int(wrong.sum())} of "
        f"{counted.numel()} counted rows, and right everywhere else (row {row}, column {col}: "
        f"got {g[row, col]:.6g}, expected {w[row, col]:.6g}): the softmax / n term is right, "
        "and the one-hot term at the target is not. There the gradient is "
        "(softmax - 1) / n: the softmax's own value minus 1, both divided by n."
    )


def _ignored_rows_left(
    got: torch.Tensor,
    want: torch.Tensor,
    logits: torch.Tensor,
    target: torch.Tensor,
    ignore_index: int,
    tol: Tolerance,
) -> str | None:
    """If every counted row of got is right and some ignored row is not 0, say what the ignored
    rows hold instead; else None."""
    ignored = (target == ignore_index).cpu()
    if not ignored.any() or ignored.all() or got.shape != want.shape:
        return None
    g, w = got.detach().cpu(), want.detach().cpu()
    close = torch.isclose(g.double(), w.double(), atol=tol.atol, rtol=tol.rtol)
    if not bool(close[~ignored].all()) or bool(close[ignored].all()):
        return None
    rows = ignored.nonzero()[:, 0].tolist()
    if bool(never_written(g)[ignored].all()):
        held = "were never written: they hold what torch.empty left there"
    elif torch.equal(g[ignored], logits.detach().cpu()[ignored]):
        held = "still hold the logits the buffer started as"
    else:
        held = "hold values other than 0"
    return (
        f"Every counted row of dlogits is right, but the ignored rows {rows} {held}. An "
        "ignored row has no loss and a gradient of 0, and that 0 must be stored too: the "
        "output does not start at 0."
    )


# ----------------------------------------------------------------------------------------------
# The check every test runs
# ----------------------------------------------------------------------------------------------


def _call(impl, logits, target, ignore_index) -> CrossEntropy:
    out = impl.cross_entropy(logits, target, ignore_index)
    if not (isinstance(out, tuple | list) and len(out) == 2):
        raise DrillFailure(
            dx.WRONG_SHAPE,
            f"cross_entropy should return (loss, dlogits), got {type(out).__name__}",
            "Return a tuple: the 0-dim float32 loss, then dlogits like logits.",
        )
    return CrossEntropy(*out)


def expect_cross_entropy(
    impl,
    backend: Backend,
    logits: torch.Tensor,
    target: torch.Tensor,
    ignore_index: int = -100,
    *,
    loss_tol: Tolerance = LOSS_TOL,
    grad_tol: Tolerance | None = None,
    reads_guarded: bool = True,
    suspects_from: torch.Tensor | None = None,
) -> None:
    """Call the learner's cross_entropy and check loss and dlogits, naming a mistake if one fits.

    For fp32 logits the loss goes first, the headline number. For bf16 logits dlogits goes first,
    because only it can be re-run on fp32 logits to tell bf16 arithmetic apart. suspects_from:
    the rows a kernel would read with the wrong row stride (`row-stride` suspects).
    """
    got = _call(impl, logits, target, ignore_index)
    ref = cross_entropy_fp64(logits, target, ignore_index)

    @cache
    def wrong() -> list[tuple[str, CrossEntropy, str]]:
        """What each mistake gives, built once, and only for an output that needs naming."""
        found = mistakes(logits, target, ignore_index)
        if suspects_from is not None:
            found.append(
                (
                    dx.ROW_STRIDE,
                    cross_entropy_fp64(suspects_from, target, ignore_index),
                    "what rows read V elements apart would give: the row stride is not V here",
                )
            )
        return found

    dtype = logits.dtype

    def check_loss() -> None:
        expect_close(
            got.loss,
            ref.loss,
            what="loss",
            tol=loss_tol,
            suspects=lambda: [Suspect(d, s.loss, story) for d, s, story in wrong()],
            reads_guarded=reads_guarded,
        )

    def check_dlogits() -> None:
        fp32 = guarded(logits.float())[0]
        try:
            expect_close(
                got.dlogits,
                round_to(ref.dlogits, dtype, backend),
                what="dlogits",
                tol=grad_tol or _tol(dtype),
                suspects=lambda: [
                    Suspect(d, round_to(s.dlogits, dtype, backend), story)
                    for d, s, story in wrong()
                ],
                fp32_rerun=lambda: _call(impl, fp32, target, ignore_index).dlogits,
                fp32_expected=ref.dlogits,
                reads_guarded=reads_guarded,
            )
        except DrillFailure as failure:
            if dx.rank(failure.diagnosis) >= dx.rank(dx.GRID_TOO_SMALL) and isinstance(
                got.dlogits, torch.Tensor
            ):
                left = _ignored_rows_left(
                    got.dlogits,
                    round_to(ref.dlogits, dtype, backend),
                    logits,
                    target,
                    ignore_index,
                    grad_tol or _tol(dtype),
                )
                if left is not None:
                    raise failure.renamed(IGNORED_GRAD, left) from None
            where = None
            if failure.diagnosis == dx.MISMATCH and isinstance(got.dlogits, torch.Tensor):
                where = _misplaced_one_hot(
                    got.dlogits, logits, target, ignore_index
                ) or _wrong_only_at_targets(
                    got.dlogits,
                    round_to(ref.dlogits, dtype, backend),
                    target,
                    ignore_index,
                    grad_tol or _tol(dtype),
                )
            if where is None:
                raise
            raise failure.renamed(GRAD_TARGET, where) from None

    checks = (check_loss, check_dlogits) if dtype == torch.float32 else (check_dlogits, check_loss)
    run_all(*checks)


def run_all(*checks) -> None:
    """Run every check; raise the most specific failure (the earlier check on a tie).

    A loss that is merely wrong says less than dlogits whose last rows were never written
    (grid-too-small), so both outputs are always looked at.
    """
    failures = []
    for check in checks:
        try:
            check()
        except DrillFailure as failure:
            failures.append(failure)
    if failures:
        raise min(failures, key=lambda failure: dx.rank(failure.diagnosis))


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def ordinary_logits(n_rows: int, n_cols: int, seed: int) -> torch.Tensor:
    """randn * 2 - ln(V) - 2 in fp32: sum(exp(x)) is about 1 per row, so one padded exp(0)
    doubles it; the largest logit is about -ln(V) + 6, so softmax has no near-certain row."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n_rows, n_cols, generator=gen) * 2.0 - math.log(n_cols) - 2.0


def targets(
    n_rows: int, n_cols: int, ignored: list[int], seed: int, ignore_index: int = -100
) -> torch.Tensor:
    """Random columns, with the last column and column 1 among them, and some rows ignored."""
    gen = torch.Generator().manual_seed(seed + 100)
    tgt = torch.randint(0, n_cols, (n_rows,), generator=gen)
    tgt[0], tgt[-1] = n_cols - 1, 1  # the last block's real lanes, and the first block
    tgt[ignored] = ignore_index
    return tgt


def _on(device: str, dtype: torch.dtype, values: torch.Tensor) -> torch.Tensor:
    return guarded(values.to(device=device, dtype=dtype))[0]


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


def test_fp32_with_ignored_rows(impl, backend):
    # V = 3001: odd, so every power-of-two block has padded lanes in its last one; 3 of 8 rows
    # ignored, so dividing by T = 8 instead of 5 shows. NaN follows the last row.
    logits = _on(backend.device, torch.float32, ordinary_logits(8, 3001, seed=1))
    target = targets(8, 3001, ignored=[2, 3, 6], seed=1).to(backend.device)
    expect_cross_entropy(impl, backend, logits, target)


def test_fp32_long_rows(impl, backend):
    # V = 40001 > 32768: every block size up to 32768 loops over several blocks, so the running
    # max must be carried and the running sum rescaled. ignore_index = -1 here.
    logits = _on(backend.device, torch.float32, ordinary_logits(6, 40001, seed=2))
    target = targets(6, 40001, ignored=[1, 4], seed=2, ignore_index=-1).to(backend.device)
    expect_cross_entropy(impl, backend, logits, target, ignore_index=-1)


def test_fp32_short_rows(impl, backend):
    # V = 37: one block of 64 at most, 27 lanes of it padding.
    logits = _on(backend.device, torch.float32, ordinary_logits(5, 37, seed=3))
    target = targets(5, 37, ignored=[2], seed=3).to(backend.device)
    expect_cross_entropy(impl, backend, logits, target)


def test_bf16_with_ignored_rows(impl, backend):
    # bf16 logits: upcast after the load; dlogits come back in bf16, the loss in fp32.
    logits = _on(backend.device, torch.bfloat16, ordinary_logits(8, 3001, seed=4))
    target = targets(8, 3001, ignored=[3, 5], seed=4).to(backend.device)
    expect_cross_entropy(impl, backend, logits, target)


def test_bf16_row_sliced(impl, backend):
    # logits = base[:, :2049], base 2049 + 127 wide: rows 2176 apart in memory. The slack holds
    # 3.0, far above these rows' logits (and unlike the 0 of a zero-padded lane), so a kernel
    # that reads rows V apart, or lanes past V, gets a visibly wrong logsumexp. NaN guards sit
    # around the whole buffer.
    n_rows, n_cols, slack = 6, 2049, 127
    values = ordinary_logits(n_rows, n_cols, seed=5).to(backend.device, torch.bfloat16)
    base = guarded(
        torch.full((n_rows, n_cols + slack), 3.0, dtype=torch.bfloat16, device=backend.device)
    )[0]
    logits = base[:, :n_cols]
    logits.copy_(values)
    flat = base.reshape(-1)[: n_rows * n_cols].reshape(n_rows, n_cols)
    target = targets(n_rows, n_cols, ignored=[4], seed=5).to(backend.device)
    expect_cross_entropy(impl, backend, logits, target, suspects_from=flat)


def test_fp32_large_logits(impl, backend):
    """The same rows, then shifted by +200 (even rows) and -200 (odd rows).

    Cross-entropy and its gradient do not change when a row is shifted. A kernel right on the
    first call but wrong on the second takes exp of the raw logits: exp(200) = inf and
    exp(-200) = 0 in fp32.
    """
    values = ordinary_logits(8, 3001, seed=6)
    target = targets(8, 3001, ignored=[5], seed=6).to(backend.device)
    expect_cross_entropy(impl, backend, _on(backend.device, torch.float32, values), target)

    shift = torch.where(torch.arange(8) % 2 == 0, SHIFT, -SHIFT)[:, None]
    shifted = _on(backend.device, torch.float32, values + shift)
    try:
        # Masks were proven on the first call; NaN here is the arithmetic's own.
        expect_cross_entropy(
            impl,
            backend,
            shifted,
            target,
            loss_tol=SHIFTED_LOSS_TOL,
            grad_tol=SHIFTED_TOL,
            reads_guarded=False,
        )
    except DrillFailure as failure:
        if failure.diagnosis not in (dx.MISMATCH, dx.NAN_OR_INF):
            raise
        floor = _max_floor_evidence(impl, shifted, target, shift[:, 0] > 0)
        if floor is not None:
            raise failure.renamed(MAX_FLOOR, floor) from None
        raise failure.renamed(
            NO_MAX_SUBTRACTION,
            "The same rows near -10 came out right: only shifting them by +-200 breaks the "
            "kernel, which is exp overflowing (exp(200) = inf) or underflowing (exp(-200) = 0) "
            "without the running max subtracted.",
        ) from None


def _max_floor_evidence(
    impl, shifted: torch.Tensor, target: torch.Tensor, up: torch.Tensor
) -> str | None:
    """Every counted row shifted up right and every one shifted down wrong: the max subtracted
    never goes below 0 (a running max started at 0, or padded lanes taken into it as 0), so a
    row near -200 takes exp(x - 0), which underflows to 0. Without the max subtracted at all,
    the rows near +200 overflow too."""
    got = _call(impl, shifted, target, -100).dlogits
    if not (isinstance(got, torch.Tensor) and got.shape == shifted.shape):
        return None
    ref = cross_entropy_fp64(shifted, target, -100).dlogits
    close = torch.isclose(
        got.double().cpu(),
        ref.double().cpu(),
        atol=SHIFTED_TOL.atol,
        rtol=SHIFTED_TOL.rtol,
    ).all(-1)
    counted = (target != -100).cpu()
    up, down = counted & up.cpu(), counted & ~up.cpu()
    if not (bool(close[up].all()) and not bool(close[down].any())):
        return None
    return (
        f"The rows shifted up by {SHIFT:g} came out right and all {int(down.sum())} shifted "
        f"down by {SHIFT:g} wrong: the max you subtract never goes below 0, so a row near "
        f"-{SHIFT:g} takes exp(x - 0), which is 0 in float32, and its lse is log(0) = -inf."
    )


def test_no_row_counted(impl, backend):
    # Every target is ignore_index: this drill's contract is loss = 0 and dlogits = 0 (torch's
    # F.cross_entropy gives NaN, 0 / 0). A kernel never divides by n_valid on ignored rows.
    logits = _on(backend.device, torch.float32, ordinary_logits(4, 3001, seed=7))
    target = torch.full((4,), -100, dtype=torch.int64, device=backend.device)
    got = _call(impl, logits, target, -100)
    if isinstance(got.loss, torch.Tensor) and got.loss.isnan().any():
        raise DrillFailure(
            dx.NAN_OR_INF,
            "loss is NaN when every row is ignored",
            "With no counted row this drill asks for loss = 0 (torch gives 0 / 0 = NaN): "
            "divide by n_valid only where a row is counted, or by max(n_valid, 1).",
        )
    ref = cross_entropy_fp64(logits, target, -100)
    run_all(
        lambda: expect_close(
            got.loss, ref.loss, what="loss with every row ignored", tol=Tolerance(0, 0)
        ),
        lambda: expect_close(
            got.dlogits,
            ref.dlogits,
            what="dlogits with every row ignored",
            tol=Tolerance(0, 0),
            reads_guarded=True,
        ),
    )
