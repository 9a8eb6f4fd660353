"""Tests for drill t4: `softmax_online(x)`, softmax over rows longer than one block.

The learner picks BLOCK_SIZE (a power of two, at most 4096), and the tests cannot see it: so
rows are 8193 to 9999 long, several blocks for any block size, and never a multiple of one
(the last block is always partial). They are also longer than the solution's ONE_PASS_MAX
(8192), so the solution's own loop is what these rows test; a few short rows (37, 1000 and
exactly 8192 columns) test its one-block path, and rows of 40009 its long-row blocks. Every
suspect, what a known mistake would output, is computed for every block size from 16 to 4096,
and a failure is named when one of them fits.
The kinds of rows, each there to expose one mistake:
- ordinary rows (randn * 2): the plain case;
- rows whose largest value (+10) is in the last column: the last, partial block raises the
  max, so a sum not rescaled when the max grows is far off, and a loop that skips the partial
  block misses the max altogether;
- rows on a rising ramp (randn + 8 j / N): the max grows in almost every block;
- rows that are all negative (in [-5, -1]): a padded lane loaded as 0 becomes the max and adds
  exp(0) = 1 per padded lane to the sum;
- rows whose first 4200 values (N - 1 if fewer) are -inf, and rows where half the values are
  -inf: a running max that starts at -inf meets exp(-inf - -inf) = NaN in the first block,
  unless guarded.
Inputs are followed by NaN (or have NaN slack after each row), so a load without a mask turns
rows NaN (`missing-mask`); tensors the learner allocates sit between runs of sentinel values,
so an unmasked store lands there. A rescale factor written exp(m_new - m_old) grows the sum
where it should shrink it (a suspect, when the running max starts at 0 or at the first block's
max), or, from a start at -inf or -1e30, overflows in the first block: 0 * inf = NaN in every
row, also with 0 around the input.
"""

from __future__ import annotations

import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    blocks_launched,
    expect_close,
    guarded,
    round_to,
    row_sliced,
)
from tutor.harness import diagnoses as dx
from tutor.harness.inputs import guard_fill, same_layout

DRILL = "t4"

NEG_INF = float("-inf")
BLOCKS = [1 << k for k in range(4, 13)]  # the BLOCK_SIZEs a learner may pick: 16 ... 4096
INF_PREFIX = 4200  # more than any block (<= 4096): the first block of these rows is all -inf

# Rows are thousands long, so outputs are around 1e-4 and often far below: the tolerances are
# relative, with an atol only for values near 0 (exp(x - m) / s stays accurate to the fp32 ulp
# down to 1e-38, so the atol never needs to hide anything).
# fp32: the GPU's exp is approximate (a few ulp) and each rescale of the running sum adds a
# rounding (hundreds of them for a block of 16): a few 1e-6 relative.
FP32 = Tolerance(atol=1e-10, rtol=2e-5)
# bf16: the reference is rounded as the backend rounds, but a kernel's fp32 value may sit on the
# other side of a rounding boundary: one bf16 ulp is at most 2**-7 of the value.
BF16 = Tolerance(atol=1e-10, rtol=2**-7)


def _tol(dtype: torch.dtype) -> Tolerance:
    return FP32 if dtype == torch.float32 else BF16


# ----------------------------------------------------------------------------------------------
# The reference, and what each mistake computes instead (float64, rows as a 2-D [R, N] tensor)
# ----------------------------------------------------------------------------------------------


def softmax_reference(rows: torch.Tensor) -> torch.Tensor:
    return torch.softmax(rows.double(), dim=-1)


def _blocked(rows: torch.Tensor, block: int, pad: float = NEG_INF) -> torch.Tensor:
    """[R, N] -> [R, blocks, block], the last block filled with `pad`."""
    n = rows.shape[-1]
    n_blocks = -(-n // block)
    padded = torch.nn.functional.pad(rows.double(), (0, n_blocks * block - n), value=pad)
    return padded.reshape(rows.shape[0], n_blocks, block)


def _safe(m: torch.Tensor) -> torch.Tensor:
    """The guard every correct kernel needs: a max still at -inf is subtracted as 0."""
    return torch.where(m == NEG_INF, torch.zeros_like(m), m)


def _normalised(rows: torch.Tensor, m: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Pass 2: exp(x - m) / s with the statistics a kernel ended pass 1 with."""
    return torch.exp(rows.double() - m[:, None]) / s[:, None]


def unrescaled_softmax(rows: torch.Tensor, block: int) -> torch.Tensor:
    """One running max and sum per row; each block's exp(x - m_new) added to an s never
    multiplied by exp(m_old - m_new)."""
    xb = _blocked(rows, block)
    running_max = torch.cummax(xb.amax(-1), dim=1).values  # [R, blocks]
    s = torch.exp(xb - _safe(running_max)[..., None]).sum(-1).sum(-1)
    return _normalised(rows, running_max[:, -1], s)


def own_max_block_sums_softmax(rows: torch.Tensor, block: int) -> torch.Tensor:
    """A running sum rescaled by exp(m_old - m_new), but each block's terms taken as
    exp(x - the block's own max) instead of exp(x - m_new): a block whose max is below the
    running max counts exp(m_new - its max) times too much."""
    xb = _blocked(rows, block)
    block_max = xb.amax(-1)  # [R, blocks]
    running = _safe(torch.cummax(block_max, dim=1).values)
    own = torch.exp(xb - _safe(block_max)[..., None]).sum(-1)
    s = (own * torch.exp(running - running[:, -1:])).sum(-1)
    return _normalised(rows, running[:, -1], s)


def unrescaled_lanes_softmax(rows: torch.Tensor, block: int) -> torch.Tensor:
    """A running max and sum per lane (combined after the loop), the per-lane sums never
    rescaled when a lane's max grows."""
    xb = _blocked(rows, block)
    lane_max = torch.cummax(xb, dim=1).values  # [R, blocks, block]
    lane_sum = torch.exp(xb - _safe(lane_max)).sum(1)  # [R, block]
    final = lane_max[:, -1, :]
    m = final.amax(-1)
    s = (lane_sum * torch.exp(final - _safe(m)[:, None])).sum(-1)
    return _normalised(rows, m, s)


def inverted_rescale_softmax(rows: torch.Tensor, block: int, zero_start: bool) -> torch.Tensor:
    """A running sum multiplied by exp(m_new - m_old) where exp(m_old - m_new) belongs, from a
    running max that starts at 0 (`zero_start`) or at the first block's max: the blocks before
    the max grew count exp(2 * growth) too much."""
    xb = _blocked(rows, block)
    running = torch.cummax(xb.amax(-1), dim=1).values  # [R, blocks]
    if zero_start:
        running = running.clamp(min=0.0)
    m = _safe(running)
    block_sums = torch.exp(xb - m[..., None]).sum(-1)
    s = (block_sums * torch.exp(m[:, -1:] - m)).sum(-1)
    return _normalised(rows, m[:, -1], s)


def zero_padded_softmax(rows: torch.Tensor, block: int) -> torch.Tensor:
    """The padded lanes of the last block loaded as 0: they enter the max and the sum."""
    xb = _blocked(rows, block, pad=0.0).reshape(rows.shape[0], -1)
    return torch.softmax(xb, dim=-1)[:, : rows.shape[-1]]


def truncated_stats_softmax(rows: torch.Tensor, block: int) -> torch.Tensor:
    """Pass 1 over range(0, N // BLOCK): max and sum without the last, partial block."""
    head = rows[:, : (rows.shape[-1] // block) * block].double()
    m = head.amax(-1)
    s = torch.exp(head - _safe(m)[:, None]).sum(-1)
    return _normalised(rows, m, s)


def nan_rows(rows: torch.Tensor, block: int, per_lane: bool) -> torch.Tensor:
    """The reference with NaN in the rows where an unguarded running max that starts at -inf
    meets exp(-inf - -inf): the first block all -inf (one running max per row), or any lane
    of it -inf, padding included (one running max per lane)."""
    first = _blocked(rows, block)[:, 0, :] == NEG_INF
    hit = first.any(-1) if per_lane else first.all(-1)
    out = softmax_reference(rows)
    out[hit] = float("nan")
    return out


def suspects(
    x: torch.Tensor,
    backend: Backend,
    flat: torch.Tensor | None,
    blocks: tuple[int, ...] = tuple(BLOCKS),
) -> list[Suspect]:
    """Every mistake's output for every block size in `blocks` (the learner's, when its launches
    show it). `flat`: the rows a kernel would read with N as the row stride (only for
    row-sliced inputs)."""
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    found: list[Suspect] = []

    def add(diagnosis: str, value: torch.Tensor, story: str) -> None:
        found.append(Suspect(diagnosis, round_to(value.reshape(x.shape), x.dtype, backend), story))

    for block in blocks:
        for per_lane, story in (
            (
                False,
                f"NaN in the rows whose first block (of {block}) is all -inf: exp(-inf - -inf)",
            ),
            (
                True,
                f"NaN in the rows where a lane of the first block (of {block}) is -inf: "
                "exp(-inf - -inf) in a lane whose running max is still -inf",
            ),
        ):
            value = nan_rows(rows, block, per_lane)
            # NaN in every row is what any kernel that makes NaN gives: no evidence for this one
            # (short rows pad every row's first block, and padding is -inf in a lane).
            if not bool(value.isnan().any(-1).all()):
                add("neg-inf-start", value, story)
    for block in blocks:
        add(
            "online-rescale",
            unrescaled_softmax(rows, block),
            f"a running sum (blocks of {block}) not rescaled by exp(m_old - m_new) when the "
            "max grew",
        )
        add(
            "online-rescale",
            own_max_block_sums_softmax(rows, block),
            f"a running sum (blocks of {block}) that adds each block's sum of exp(x - the "
            "block's own max) where exp(x - m_new) belongs",
        )
        add(
            "online-rescale",
            unrescaled_lanes_softmax(rows, block),
            f"per-lane running sums (blocks of {block}) not rescaled when a lane's max grew",
        )
    for block in blocks:
        for zero_start, start in ((False, "the first block's max"), (True, "0")):
            add(
                "rescale-inverted",
                inverted_rescale_softmax(rows, block, zero_start),
                f"a running sum (blocks of {block}, the max starting at {start}) multiplied "
                "by exp(m_new - m_old) instead of exp(m_old - m_new) when the max grew",
            )
    for block in blocks:
        add(
            "padding-neg-inf",
            zero_padded_softmax(rows, block),
            f"a softmax whose padded lanes (blocks of {block}) were 0: they entered the max "
            "and the sum",
        )
    for block in blocks:
        if 0 < n // block * block < n:
            add(
                "loop-bound",
                truncated_stats_softmax(rows, block),
                f"max and sum over the first {n // block} full blocks of {block} only: the "
                "last, partial block was skipped",
            )
    if flat is not None:
        add(
            dx.ROW_STRIDE,
            softmax_reference(flat.reshape(-1, n)),
            "what rows read N elements apart would give: the row stride is not N here",
        )
    return found


def _rows_close(got: torch.Tensor, want: torch.Tensor, tol: Tolerance) -> torch.Tensor:
    """Per row: every value within tolerance (NaN where the other is NaN counts as equal)."""
    close = torch.isclose(got.double(), want.double(), atol=tol.atol, rtol=tol.rtol, equal_nan=True)
    return close.all(-1)


def loop_bound_evidence(
    y: torch.Tensor, x: torch.Tensor, backend: Backend, tol: Tolerance
) -> str | None:
    """For some block size B: every row right (or right for the truncated statistics) on its
    first N // B * B columns, and every value past them wrong: a loop that stops before the
    last, partial block, in pass 2 (the tail never written) or in both passes."""
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    got = y.detach().reshape(-1, n).double()
    ref = round_to(softmax_reference(rows), x.dtype, backend).double()
    for block in blocks_launched(y, BLOCKS):
        k = n // block * block
        # one column past the last whole block is also what a store mask one lane short leaves
        # wrong: no evidence for the loop (N = 8193 gives it on every block size)
        if not 0 < k < n - 1:
            continue
        trunc = round_to(truncated_stats_softmax(rows, block), x.dtype, backend).double()
        head_ok = _rows_close(got[:, :k], ref[:, :k], tol) | _rows_close(
            got[:, :k], trunc[:, :k], tol
        )
        tail = torch.isclose(got[:, k:], ref[:, k:], atol=tol.atol, rtol=tol.rtol, equal_nan=True)
        # every column of the skipped block wrong, in every row: a store mask one lane short
        # leaves one column wrong, which fits a block that it does not stop at
        if head_ok.all() and not bool(tail.any()):
            return (
                f"Columns 0..{k - 1} are right and columns {k}..{n - 1} are not: with "
                f"BLOCK_SIZE = {block}, {k} = (N // BLOCK_SIZE) * BLOCK_SIZE. The loop "
                "stops before the last, partial block."
            )
    return None


def rescale_overflow_evidence(impl, x: torch.Tensor, y: torch.Tensor) -> str | None:
    """NaN in every row, rows of plain finite values too, and again with 0 around the input:
    what 0 * inf in the first rescale gives, exp(m_new - m_old) with m_old at its -inf (or
    -1e30) start. A running max that starts at -inf without a guard turns only rows whose first
    block is all -inf NaN; a load past the end, only with NaN around the input."""
    n = x.shape[-1]
    if not bool(y.reshape(-1, n).isnan().any(-1).all()):
        return None
    finite = torch.isfinite(x.reshape(-1, n)).all(-1)
    if not bool(finite.any()):
        return None
    with guard_fill(0.0):
        again = impl.softmax_online(same_layout(x))
    if not isinstance(again, torch.Tensor) or again.shape != x.shape:
        return None
    if not bool(again.reshape(-1, n).isnan().any(-1).all()):
        return None
    # A row of 2^16 finite values has no padded lane in any block of a power of two up to its
    # length: 0 * inf in the first rescale still makes NaN there, while new terms taken against
    # the old max's -inf start, exp(x - m_old), make inf and NaN only from padded -inf lanes.
    with guard_fill(0.0):
        whole, _ = guarded(_on(make_rows([ORDINARY], 1 << 16, seed=11), (1, 1 << 16),
                               torch.float32, x.device))  # fmt: skip
        unpadded = impl.softmax_online(whole)
    if not (isinstance(unpadded, torch.Tensor) and bool(unpadded.isnan().any())):
        return None
    return (
        f"Every row is NaN, also the {int(finite.sum())} rows with no -inf in them, and also "
        "with 0 instead of NaN around the input, and a row of 65536 finite values that fills "
        "every block: the kernel makes NaN in every row, before any value can be wrong. In an "
        "online softmax that is the first rescale: 0 * inf, where the factor is "
        "exp(m_new - m_old) and m_old is still its -inf (or -1e30) start."
    )


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------

ORDINARY, PEAK_AT_END, RAMP, NEGATIVE, INF_PREFIXED, HALF_INF = range(6)


def make_rows(kinds: list[int], n: int, seed: int) -> torch.Tensor:
    """One row of each kind listed (see the module docstring), float32 [len(kinds), n]."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for kind in kinds:
        noise = torch.randn(n, generator=gen)
        if kind == ORDINARY:
            row = 2.0 * noise
        elif kind == PEAK_AT_END:
            row = noise.clone()
            row[-1] = 10.0
        elif kind == RAMP:
            row = noise + 8.0 * torch.arange(n) / n
        elif kind == NEGATIVE:
            row = -1.0 - 4.0 * torch.rand(n, generator=gen)
        elif kind == INF_PREFIXED:
            row = 2.0 * noise
            row[: min(INF_PREFIX, n - 1)] = NEG_INF  # >= 4096 values when N > 4096
        else:  # HALF_INF: every other value -inf, at random
            row = 2.0 * noise
            row[torch.rand(n, generator=gen) < 0.5] = NEG_INF
            row[-1] = 0.0  # never an all -inf row
        out.append(row)
    return torch.stack(out)


def _on(
    rows: torch.Tensor, shape: tuple[int, ...], dtype: torch.dtype, device: str
) -> torch.Tensor:
    return rows.reshape(shape).to(dtype=dtype, device=device)


def check_softmax(
    impl,
    backend: Backend,
    x: torch.Tensor,
    *,
    reads_guarded: bool = True,
    flat: torch.Tensor | None = None,
) -> None:
    """softmax_online(x) against the reference; on a mismatch, name the mistake if one fits."""
    tol = _tol(x.dtype)
    y = impl.softmax_online(x)
    what = f"output for a {str(x.dtype).removeprefix('torch.')} x of shape {tuple(x.shape)}"
    expected = round_to(
        softmax_reference(x.reshape(-1, x.shape[-1])).reshape(x.shape), x.dtype, backend
    )
    try:
        expect_close(
            y,
            expected,
            what=what,
            tol=tol,
            suspects=lambda: suspects(x, backend, flat, blocks_launched(y, BLOCKS)),
            fp32_rerun=lambda: impl.softmax_online(x.float()),
            fp32_expected=softmax_reference(x.reshape(-1, x.shape[-1]).float())
            .reshape(x.shape)
            .float(),
            reads_guarded=reads_guarded,
        )
    except DrillFailure as failure:
        # A generic pattern: the loop bound may explain it. Even NaN (missing-mask, when the
        # inputs are guarded): the columns a short loop never writes hold whatever memory held.
        if dx.rank(failure.diagnosis) == dx.DRILL_RANK:
            raise
        if isinstance(y, torch.Tensor) and y.shape == x.shape and y.dtype == x.dtype:
            evidence = rescale_overflow_evidence(impl, x, y)
            if evidence is not None:
                raise failure.renamed("rescale-inverted", evidence) from None
            evidence = loop_bound_evidence(y, x, backend, tol)
            if evidence is not None:
                raise failure.renamed("loop-bound", evidence) from None
        raise


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


def test_fp32_long_rows(impl, backend):
    # N = 8699: 3 blocks of 4096, 544 of 16. One row of each finite kind; NaN after the end.
    kinds = [ORDINARY, PEAK_AT_END, RAMP, NEGATIVE]
    x, _ = guarded(_on(make_rows(kinds, 8699, seed=1), (4, 8699), torch.float32, backend.device))
    check_softmax(impl, backend, x)


def test_fp32_rows_with_neg_inf(impl, backend):
    # Rows whose first 4200 values are -inf (their first block is all -inf for any block size)
    # and rows half -inf, between ordinary rows: only the -inf rows may go NaN. 7 rows: an odd
    # count, for a grid that gives each program two rows and rounds down.
    kinds = [INF_PREFIXED, ORDINARY, HALF_INF, INF_PREFIXED, HALF_INF, PEAK_AT_END, RAMP]
    x, _ = guarded(_on(make_rows(kinds, 8443, seed=2), (7, 8443), torch.float32, backend.device))
    check_softmax(impl, backend, x)


def test_bf16_long_rows_3d(impl, backend):
    # N = 8193: for every BLOCK_SIZE the last block holds one value. Leading dims (2, 3).
    kinds = [PEAK_AT_END, ORDINARY, NEGATIVE, RAMP, INF_PREFIXED, PEAK_AT_END]
    x, _ = guarded(
        _on(make_rows(kinds, 8193, seed=3), (2, 3, 8193), torch.bfloat16, backend.device)
    )
    check_softmax(impl, backend, x)


def test_fp32_strided_rows_3d(impl, backend):
    # base[..., :8601] with 64 NaN after each row: the row stride is 8665, and a load without
    # a mask reads NaN.
    kinds = [ORDINARY, NEGATIVE, PEAK_AT_END, RAMP]
    x, base = row_sliced(
        _on(make_rows(kinds, 8601, seed=4), (2, 2, 8601), torch.float32, backend.device)
    )
    flat = base.reshape(-1)[: x.numel()].reshape(x.shape)
    check_softmax(impl, backend, x, flat=flat)


def test_bf16_strided_rows(impl, backend):
    kinds = [NEGATIVE, PEAK_AT_END, ORDINARY, INF_PREFIXED]
    x, base = row_sliced(
        _on(make_rows(kinds, 8599, seed=5), (4, 8599), torch.bfloat16, backend.device)
    )
    flat = base.reshape(-1)[: x.numel()].reshape(x.shape)
    check_softmax(impl, backend, x, flat=flat)


def test_fp32_short_rows(impl, backend):
    # N = 37: shorter than most blocks, so a loop runs once over a mostly padded block.
    kinds = [ORDINARY, NEGATIVE, RAMP, NEGATIVE]
    x, _ = guarded(_on(make_rows(kinds, 37, seed=6), (4, 37), torch.float32, backend.device))
    check_softmax(impl, backend, x)


def test_rows_that_fit_in_one_block(impl, backend):
    # N = 1000 and N = 8192 (exactly a power of two, no padding): rows that fit in one block of
    # at most 8192, where the solution loads the row once. The 8192 rows are bf16 (the bench's
    # dtype) with NaN slack after each; the -inf row comes first, because the rows after the
    # first are the ones a wrong row stride turns NaN (that must not look like neg-inf-start).
    kinds = [NEGATIVE, INF_PREFIXED, PEAK_AT_END]
    x, _ = guarded(_on(make_rows(kinds, 1000, seed=9), (3, 1000), torch.float32, backend.device))
    check_softmax(impl, backend, x)
    kinds = [HALF_INF, ORDINARY, NEGATIVE]
    x, base = row_sliced(
        _on(make_rows(kinds, 8192, seed=10), (3, 8192), torch.bfloat16, backend.device)
    )
    flat = base.reshape(-1)[: x.numel()].reshape(x.shape)
    check_softmax(impl, backend, x, flat=flat)


def test_fp32_transposed(impl, backend):
    # A transposed view: neighbours along the last dim are 4 elements apart in memory, not 1.
    kinds = [PEAK_AT_END, NEGATIVE, ORDINARY, RAMP]
    x = make_rows(kinds, 8199, seed=7).to(backend.device).t().contiguous().t()
    check_softmax(impl, backend, x, reads_guarded=False)


def test_fp32_one_dimensional(impl, backend):
    # No leading dims at all: one row of 9999 (3 blocks of 4096).
    x, _ = guarded(
        _on(make_rows([PEAK_AT_END], 9999, seed=8), (9999,), torch.float32, backend.device)
    )
    check_softmax(impl, backend, x)


def test_bf16_rows_of_forty_thousand(impl, backend):
    # N = 40009: rows as long as a vocabulary, past the solution's LONG_ROW (32768), where its
    # blocks grow to 16384 (3 blocks, the last partial). bf16, the bench's dtype, with NaN slack
    # after each row; the -inf row is not first, for the same reason as above.
    kinds = [PEAK_AT_END, INF_PREFIXED, NEGATIVE]
    x, base = row_sliced(
        _on(make_rows(kinds, 40009, seed=11), (3, 40009), torch.bfloat16, backend.device)
    )
    flat = base.reshape(-1)[: x.numel()].reshape(x.shape)
    check_softmax(impl, backend, x, flat=flat)
