"""Tests for drill f1: `top_k_renorm(probs, k)` and `top_p_renorm(probs, p)`.

The reference sorts each row here, in fp64, from exactly the values the kernel loads: top-k's
threshold t is the k-th largest value, top-p's the first value of the sorted row at which the
running mass reaches p; every probability >= t is kept and divided by the kept mass. On a
mismatch the output is compared with what each classic mistake would produce:

- `boundary-off-by-one`: the threshold one step off: the k-th value (and its ties) dropped
  (`probs > t`), the (k+1)-th or (k-1)-th largest taken as t, or the next value below t kept
  too. For top-p, `mass > p` instead of `>= p` shows only where a prefix's mass equals p
  exactly: rows of powers of two, whose sums are exact in any order.
- `ties-split`: exactly k kept, the tokens tied with the k-th chosen by position (or, for
  top-p, tied tokens taken in order until the mass reaches p). Found from the output too: two
  tokens of the same probability, one kept and one dropped, is a split tie whatever the order.
- `not-renormalised`: the kept probabilities left as they are, or divided by p.
- `padding-counted`: the padded lanes of the last block counted as tokens, which moves top-k's
  count by the padding: the test cannot see BLOCK_V, so there is a suspect for each
  power-of-two block; V is not a power of two.
- `search-stops-early`: the kept set a superset of the right one, threshold-shaped (every
  token above the smallest kept one kept) and renormalised over itself, reaching two or more
  values below t. Rows with 16 values packed one float32 ulp apart just below t make any
  search that stops before the last few halvings keep several of them.

Inputs sit in NaN guards (a load without a mask reads NaN: `missing-mask`). The rows for
top-p are chosen so that p lies in the middle of the boundary token's mass: the kernel's fp32
sums, in any order, pick the same token as the fp64 reference.
"""

from __future__ import annotations

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
    where_wrong,
)
from tutor.harness import diagnoses as dx
from tutor.harness.inputs import guard_fill

DRILL = "f1"

BOUNDARY = "boundary-off-by-one"
TIES_SPLIT = "ties-split"
NOT_RENORMALISED = "not-renormalised"
PADDING_COUNTED = "padding-counted"
STOPS_EARLY = "search-stops-early"

FP32 = torch.float32
BLOCKS = [1 << b for b in range(4, 17)]  # every BLOCK_V a kernel might pick, 16 to 65536

# fp32: the kept mass is an fp32 sum of up to 40001 terms in the kernel's order (a few 1e-7
# relative), and the GPU's division is within 2 ulp. A dropped token must read 0: the atol is
# far below the smallest probability any test keeps (1e-5 and up).
FP32_TOL = Tolerance(atol=1e-12, rtol=1e-5)
# bf16: the reference is rounded as the backend rounds, but the kernel's fp32 quotient may sit
# on the other side of a rounding boundary: one bf16 ulp is at most 2**-7 relative.
BF16_TOL = Tolerance(atol=1e-12, rtol=2**-7)
# p sits at least this share of the boundary token's mass away from the prefix masses on either
# side of it, and at least MIN_MARGIN: far beyond any fp32 summation order's rounding.
MARGIN_SHARE = 0.25
MIN_MARGIN = 1e-6


def _tol(dtype: torch.dtype) -> Tolerance:
    return FP32_TOL if dtype == torch.float32 else BF16_TOL


# ----------------------------------------------------------------------------------------------
# The reference and the kept sets of each mistake (fp64, CPU, one row at a time)
# ----------------------------------------------------------------------------------------------


def _descending(row: torch.Tensor) -> torch.Tensor:
    return row.sort(descending=True).values


def kth_largest(row: torch.Tensor, k: int) -> float:
    """The k-th largest value (k >= V: the smallest, so the whole row is kept)."""
    return float(_descending(row)[min(k, row.numel()) - 1])


def top_p_threshold(row: torch.Tensor, p: float, *, strict: bool = False) -> float:
    """The first value of the sorted row at which the running mass reaches p (passes it, with
    strict); the smallest non-zero value when it never does."""
    ordered = _descending(row)
    mass = ordered.cumsum(0)
    short = mass <= p if strict else mass < p
    reached = int(short.sum())
    if reached >= row.numel():
        return float(ordered[ordered > 0].min())
    return float(ordered[reached])


def next_below(row: torch.Tensor, t: float) -> float:
    """The largest value of the row below t (t itself when none is)."""
    below = row[row < t]
    return float(below.max()) if below.numel() else t


def renormalised(row: torch.Tensor, keep: torch.Tensor, divisor: str = "kept") -> torch.Tensor:
    """row where keep, divided by the kept mass ("kept"), or left as it is ("none"). Nothing
    kept gives zeros (what a kernel whose threshold passed every value writes)."""
    kept = torch.where(keep, row, 0.0)
    return kept / kept.sum() if divisor == "kept" and kept.sum() > 0 else kept


def strict_keep(row: torch.Tensor, t: float) -> torch.Tensor:
    """probs > t kept but divided by the mass of probs >= t: only the final comparison strict."""
    return torch.where(row > t, row / row[row >= t].sum(), 0.0)


def ties_by_position(row: torch.Tensor, t: float, room: float, weight: str, last: bool):
    """Keep every value > t, then the tokens equal to t in position order (from the end with
    last) while room is left: `room` counts tokens ("count") or probability ("mass")."""
    keep = row > t
    used = float(keep.sum()) if weight == "count" else float(row[keep].sum())
    tied = (row == t).nonzero()[:, 0].tolist()
    for col in reversed(tied) if last else tied:
        if used >= room:
            break
        keep[col] = True
        used += 1.0 if weight == "count" else float(row[col])
    return keep


def _rows(probs: torch.Tensor) -> list[torch.Tensor]:
    return list(probs.detach().double().cpu())


def _stack(rows: list[torch.Tensor], like: torch.Tensor) -> torch.Tensor:
    return torch.stack(rows).float().to(like.device)


def top_k_expected(probs: torch.Tensor, k: int) -> torch.Tensor:
    rows = _rows(probs)
    return _stack([renormalised(r, r >= kth_largest(r, k)) for r in rows], probs)


def top_p_expected(probs: torch.Tensor, p: list[float]) -> torch.Tensor:
    rows = _rows(probs)
    return _stack(
        [renormalised(r, r >= top_p_threshold(r, q)) for r, q in zip(rows, p, strict=True)], probs
    )


def _pads(n_cols: int) -> list[int]:
    """The padded lanes of the last block for every block size in BLOCKS (distinct, > 0)."""
    return sorted({-n_cols % block for block in BLOCKS} - {0})


def top_k_mistakes(probs: torch.Tensor, k: int) -> list[tuple[str, torch.Tensor, str]]:
    """(diagnosis, what the output would be, story) for each top-k mistake."""
    rows = _rows(probs)

    def each(make) -> torch.Tensor:
        return _stack([make(r) for r in rows], probs)

    def kth(r: torch.Tensor, rank: int) -> torch.Tensor:
        return r >= kth_largest(r, rank) if rank >= 1 else torch.zeros_like(r, dtype=torch.bool)

    found = [
        (
            BOUNDARY,
            each(lambda r: renormalised(r, r > kth_largest(r, k))),
            "probs > t: the k-th largest value and every token tied with it dropped",
        ),
        (
            BOUNDARY,
            each(lambda r: strict_keep(r, kth_largest(r, k))),
            "probs > t in the last pass, divided by the mass of probs >= t: the k-th largest "
            "value and its ties dropped",
        ),
        (
            BOUNDARY,
            each(lambda r: renormalised(r, kth(r, k + 1))),
            "the (k+1)-th largest value taken as the threshold: the count compared with k + 1",
        ),
        (
            BOUNDARY,
            each(lambda r: renormalised(r, kth(r, k - 1))),
            "the (k-1)-th largest value taken as the threshold: the count compared with k - 1",
        ),
        (
            BOUNDARY,
            each(lambda r: renormalised(r, r >= next_below(r, kth_largest(r, k)))),
            "the next value below the k-th largest kept too",
        ),
        (
            NOT_RENORMALISED,
            each(lambda r: renormalised(r, r >= kth_largest(r, k), divisor="none")),
            "the kept probabilities as they are, not divided by their sum",
        ),
    ]
    for last, side in ((False, "first"), (True, "last")):
        found.append(
            (
                TIES_SPLIT,
                each(
                    lambda r, last=last: renormalised(
                        r, ties_by_position(r, kth_largest(r, k), k, "count", last)
                    )
                ),
                f"exactly k kept: of the tokens tied with the k-th, the {side} ones by position",
            )
        )
    for pad in _pads(probs.shape[-1]):
        found += [
            (
                PADDING_COUNTED,
                each(lambda r, pad=pad: renormalised(r, kth(r, k + pad))),
                f"the count short by the {pad} padded lanes of the last block: the (k+{pad})-th "
                "largest value taken as the threshold",
            ),
            (
                PADDING_COUNTED,
                each(lambda r, pad=pad: renormalised(r, kth(r, k - pad))),
                f"the count raised by the {pad} padded lanes of the last block: the (k-{pad})-th "
                "largest value taken as the threshold",
            ),
        ]
    return found


def top_p_mistakes(probs: torch.Tensor, p: list[float]) -> list[tuple[str, torch.Tensor, str]]:
    """(diagnosis, what the output would be, story) for each top-p mistake."""
    rows = list(zip(_rows(probs), p, strict=True))

    def each(make) -> torch.Tensor:
        return _stack([make(r, q) for r, q in rows], probs)

    found = [
        (
            BOUNDARY,
            each(lambda r, q: renormalised(r, r > top_p_threshold(r, q))),
            "probs > t: the token whose mass reaches p dropped, with every token tied with it",
        ),
        (
            BOUNDARY,
            each(lambda r, q: strict_keep(r, top_p_threshold(r, q))),
            "probs > t in the last pass, divided by the mass of probs >= t: the token whose mass "
            "reaches p dropped, with its ties",
        ),
        (
            BOUNDARY,
            each(lambda r, q: renormalised(r, r >= top_p_threshold(r, q, strict=True))),
            "mass > p instead of mass >= p: a prefix whose mass equals p exactly is not enough",
        ),
        (
            BOUNDARY,
            each(lambda r, q: renormalised(r, r >= next_below(r, top_p_threshold(r, q)))),
            "the next value below t kept too",
        ),
        (
            NOT_RENORMALISED,
            each(lambda r, q: renormalised(r, r >= top_p_threshold(r, q), divisor="none")),
            "the kept probabilities as they are, not divided by their sum",
        ),
        (
            NOT_RENORMALISED,
            each(lambda r, q: renormalised(r, r >= top_p_threshold(r, q), divisor="none") / q),
            "the kept probabilities divided by p instead of by their sum",
        ),
    ]
    for last, side in ((False, "first"), (True, "last")):
        found.append(
            (
                TIES_SPLIT,
                each(
                    lambda r, q, last=last: renormalised(
                        r, ties_by_position(r, top_p_threshold(r, q), q, "mass", last)
                    )
                ),
                f"tokens tied with t kept only until the mass reaches p, the {side} ones by "
                "position",
            )
        )
    return found


# ----------------------------------------------------------------------------------------------
# Evidence from the output alone
# ----------------------------------------------------------------------------------------------


def split_tie(got: torch.Tensor, probs: torch.Tensor) -> str | None:
    """A row where two tokens of the same non-zero probability came out one kept, one dropped:
    no threshold can do that. Say where; else None."""
    for row, (g, x) in enumerate(zip(got.detach().cpu(), probs.detach().cpu(), strict=True)):
        values, group, sizes = torch.unique(x, return_inverse=True, return_counts=True)
        kept = torch.zeros_like(sizes).scatter_add_(0, group, (g != 0).long())
        split = (kept > 0) & (kept < sizes) & (values > 0)
        if split.any():
            i = int(split.nonzero()[0, 0])
            return (
                f"In row {row}, {int(sizes[i])} tokens have probability {float(values[i]):.6g}; "
                f"your output keeps {int(kept[i])} of them and drops the others. A threshold "
                "keeps all of them or none: compare each value with t (x >= t), never count "
                "tokens off one by one."
            )
    return None


def stopped_early(
    got: torch.Tensor, probs: torch.Tensor, want: torch.Tensor, tol: Tolerance
) -> str | None:
    """The kept set, in every row, the right one plus whole values below t (threshold-shaped,
    renormalised over itself), with two or more values below t in some row: the search ended
    with t still a range. Say how far; else None."""
    g, x, w = (t.detach().double().cpu() for t in (got, probs, want))
    worst = None
    for row in range(x.shape[0]):
        kept, right = (g[row] != 0) & (x[row] > 0), (w[row] != 0) & (x[row] > 0)
        if bool((right & ~kept).any()) or not kept.any():
            return None  # a right token dropped: not a superset
        lowest = float(x[row][kept].min())
        if not bool(kept[x[row] >= lowest].all()):
            return None  # not everything above the smallest kept value: no threshold
        renorm = renormalised(x[row], kept)
        if not torch.allclose(g[row], renorm, atol=tol.atol, rtol=tol.rtol):
            return None
        extra = torch.unique(x[row][kept & ~right]).numel()
        if worst is None or extra > worst[1]:
            worst = (row, extra, int((kept & ~right).sum()))
    if worst is None or worst[1] < 2:
        return None
    row, extra, tokens = worst
    return (
        f"Row {row} keeps {tokens} tokens too many, of {extra} different values just below the "
        "right threshold: everything above them is kept and renormalised as it should be. The "
        "search ended while t was still a range, and its lower end was used: run the bisection "
        "until one key is left (30 halvings of the float32 keys, 14 of the bf16 ones)."
    )


def expect_renorm(
    got: object,
    probs: torch.Tensor,
    want: torch.Tensor,
    backend: Backend,
    *,
    what: str,
    mistakes,
    fp32_rerun=None,
    fp32_expected=None,
    suspects_from=None,
) -> None:
    """Compare the learner's output with the reference, naming a mistake if one fits.

    mistakes: a function giving (diagnosis, output, story) for each suspect; suspects_from: a
    function giving what rows read V apart would give (`row-stride`)."""
    dtype, tol = probs.dtype, _tol(probs.dtype)

    def suspects() -> list[Suspect]:
        found = [Suspect(d, round_to(s, dtype, backend), story) for d, s, story in mistakes()]
        if suspects_from is not None:
            found.append(
                Suspect(
                    dx.ROW_STRIDE,
                    round_to(suspects_from(), dtype, backend),
                    "what rows read V elements apart would give: the row stride is not V here",
                )
            )
        return found

    try:
        expect_close(
            got,
            round_to(want, dtype, backend),
            what=what,
            tol=tol,
            suspects=suspects,
            fp32_rerun=fp32_rerun,
            fp32_expected=fp32_expected,
            reads_guarded=True,
        )
    except DrillFailure as failure:
        if failure.diagnosis not in (dx.MISMATCH, dx.TAIL_WRONG):
            raise
        assert isinstance(got, torch.Tensor)
        tie = split_tie(got, probs)
        if tie is not None:
            raise failure.renamed(TIES_SPLIT, tie) from None
        early = stopped_early(got, probs, round_to(want, dtype, backend), tol)
        if early is not None:
            raise failure.renamed(STOPS_EARLY, early) from None
        raise


def check_top_k(impl, backend: Backend, probs: torch.Tensor, k: int, **extra) -> None:
    """top_k_renorm on NaN-guarded probs, checked against the reference and the mistakes."""
    x = guarded(probs)[0] if probs.is_contiguous() else probs
    fp32 = guarded(probs.float())[0] if probs.dtype != torch.float32 else None
    expect_renorm(
        impl.top_k_renorm(x, k),
        probs,
        top_k_expected(probs, k),
        backend,
        what=f"top_k_renorm's output for k = {k}",
        mistakes=lambda: top_k_mistakes(probs, k),
        fp32_rerun=(lambda: impl.top_k_renorm(fp32, k)) if fp32 is not None else None,
        fp32_expected=top_k_expected(probs, k) if fp32 is not None else None,
        **extra,
    )


def check_top_p(impl, backend: Backend, probs: torch.Tensor, p, **extra) -> None:
    """top_p_renorm on NaN-guarded probs; p a float or a [B] tensor."""
    per_row = p.tolist() if isinstance(p, torch.Tensor) else [float(p)] * probs.shape[0]
    x = guarded(probs)[0] if probs.is_contiguous() else probs
    fp32 = guarded(probs.float())[0] if probs.dtype != torch.float32 else None
    shown = "per-row p" if isinstance(p, torch.Tensor) else f"p = {p:g}"
    expect_renorm(
        impl.top_p_renorm(x, p),
        probs,
        top_p_expected(probs, per_row),
        backend,
        what=f"top_p_renorm's output for {shown}",
        mistakes=lambda: top_p_mistakes(probs, per_row),
        fp32_rerun=(lambda: impl.top_p_renorm(fp32, p)) if fp32 is not None else None,
        fp32_expected=top_p_expected(probs, per_row) if fp32 is not None else None,
        **extra,
    )


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def softmax_row(n_cols: int, seed: int, scale: float = 2.0) -> torch.Tensor:
    """softmax(randn * scale) in fp64: distinct values, a few large, most small."""
    gen = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(n_cols, generator=gen, dtype=torch.float64) * scale, 0)


def as_probs(rows: list[torch.Tensor], dtype: torch.dtype) -> torch.Tensor:
    """The rows divided by their sums in fp64, then rounded to dtype (equal values stay equal;
    the sums come out 1 to within dtype's rounding)."""
    return torch.stack([row / row.sum() for row in rows]).to(dtype)


def margin_ok(row: torch.Tensor, p: float) -> bool:
    """p in the middle of the boundary token's mass, well away from both prefix masses."""
    ordered = _descending(row.double())
    mass = ordered.cumsum(0)
    j = int((mass < p).sum())
    if j == 0 or j >= row.numel() - 1:
        return False
    gap = min(float(mass[j]) - p, p - float(mass[j - 1]))
    return gap >= max(MARGIN_SHARE * float(ordered[j]), MIN_MARGIN)


def top_p_rows(
    n_rows: int, n_cols: int, p: float, seed: int, dtype: torch.dtype, scale: float = 2.0
) -> torch.Tensor:
    """Softmax rows on which p has a clear boundary token (the first seeds that give one)."""
    rows = []
    for i in range(n_rows):
        for attempt in range(100):
            row = as_probs([softmax_row(n_cols, seed * 1000 + i * 100 + attempt, scale)], dtype)
            if margin_ok(row[0], p):
                rows.append(row[0])
                break
        else:
            raise AssertionError(f"no row of {n_cols} with a clear boundary for p = {p}")
    return torch.stack(rows)


def tied_row(n_cols: int, seed: int, first: int, count: int) -> torch.Tensor:
    """A softmax row whose ranks first .. first + count - 1 (0 = the largest) all hold one
    value, at scattered positions (an order by position is not an order by value)."""
    row = softmax_row(n_cols, seed)
    order = row.argsort(descending=True)
    row[order[first : first + count]] = float(row[order[first]])
    return row


def headed_row(head: list[float], n_cols: int, seed: int) -> torch.Tensor:
    """The values `head`, then n_cols - len(head) smaller random ones holding the rest of the
    mass, all shuffled."""
    gen = torch.Generator().manual_seed(seed)
    tail = softmax_row(n_cols - len(head), seed, scale=1.0) * (1.0 - sum(head))
    assert float(tail.max()) < min(head), "the tail must stay below the head"
    row = torch.cat([torch.tensor(head, dtype=torch.float64), tail])
    return row[torch.randperm(n_cols, generator=gen)]


def one_ulp_apart(value: float, count: int) -> list[float]:
    """The count float32 values right below float32(value), one ulp apart."""
    below, found = torch.tensor(value, dtype=torch.float32), []
    for _ in range(count):
        below = torch.nextafter(below, torch.zeros(()))
        found.append(float(below))
    return found


def _on(device: str, probs: torch.Tensor) -> torch.Tensor:
    return probs.to(device)


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


def test_top_k_fp32(impl, backend):
    # V = 1000 is no power of two: every block size has padded lanes in the last block.
    probs = as_probs([softmax_row(1000, seed) for seed in (1, 2, 3)], torch.float32)
    check_top_k(impl, backend, _on(backend.device, probs), 50)


def test_top_p_fp32(impl, backend):
    probs = top_p_rows(3, 1000, 0.5, seed=4, dtype=torch.float32)
    check_top_p(impl, backend, _on(backend.device, probs), 0.5)


def test_top_k_ties(impl, backend):
    # Rows 0-1: seven tokens tied at ranks 7..13, and k = 10 falls inside the group: all seven
    # are kept (13 tokens). Row 2: the tie sits at ranks 0..6, so k = 10 keeps it and 3 more.
    rows = [tied_row(777, 11, 7, 7), tied_row(777, 12, 7, 7), tied_row(777, 13, 0, 7)]
    check_top_k(impl, backend, _on(backend.device, as_probs(rows, torch.float32)), 10)


def test_top_p_ties(impl, backend):
    # Nine tokens tied at 0.02 below a head of 0.59: p = 0.66 lies inside the group's mass,
    # halfway between three of them and four, so a kernel that takes ties one at a time stops
    # inside the group; the threshold keeps all nine.
    head = [0.2, 0.15, 0.1, 0.08, 0.06] + [0.02] * 9
    rows = [headed_row(head, 777, seed) for seed in (21, 22, 23)]
    check_top_p(impl, backend, _on(backend.device, as_probs(rows, torch.float32)), 0.66)


def test_dense_values_below_threshold(impl, backend):
    # A head of 0.25, 0.2, 0.15 and 0.1, then t = 0.01, then 16 values one float32 ulp apart
    # right below t. k = 5 and p = 0.705 both make t the threshold; a search that stops while
    # t is still a range of keys keeps several of the 16. V = 2016 = 63 * 32: every block pads
    # 32 lanes or more, so no padded count can look like the 16 extra tokens.
    head = [0.25, 0.2, 0.15, 0.1, 0.01] + one_ulp_apart(0.01, 16)
    probs = _on(backend.device, as_probs([headed_row(head, 2016, s) for s in (31, 32)], FP32))
    check_top_k(impl, backend, probs, 5)
    check_top_p(impl, backend, probs, 0.705)


def test_exact_masses(impl, backend):
    """Rows of powers of two: 0.5, 0.25, 0.125 and 1024 tokens of 2**-13, with four exact
    zeros, shuffled (V = 1031). Every sum of them is exact in fp32, in any order.

    p = 0.75 is reached exactly by {0.5, 0.25}: mass >= p keeps those two, mass > p a third.
    p = 1 keeps every non-zero probability, and k = V every token.
    """
    values = [0.5, 0.25, 0.125] + [2.0**-13] * 1024 + [0.0] * 4
    gen = torch.Generator().manual_seed(41)
    rows = [torch.tensor(values)[torch.randperm(len(values), generator=gen)] for _ in range(2)]
    probs = _on(backend.device, torch.stack(rows).to(torch.bfloat16))
    check_top_p(impl, backend, probs, 0.75)
    check_top_p(impl, backend, probs, 1.0)
    check_top_k(impl, backend, probs, len(values))


def test_top_k_whole_row_and_one(impl, backend):
    # k = V and k > V keep every token (still renormalised); k = 1 keeps the largest alone.
    probs = _on(backend.device, as_probs([softmax_row(37, s) for s in (51, 52)], FP32))
    for k in (37, 40, 1):
        check_top_k(impl, backend, probs, k)


def test_bf16(impl, backend):
    # bf16 keeps 8 bits of mantissa: 3001 probabilities take only a few hundred values, so most
    # tokens are tied with others, the boundary token's too.
    probs = as_probs([softmax_row(3001, s) for s in (61, 62, 63)], torch.bfloat16)
    check_top_k(impl, backend, _on(backend.device, probs), 100)
    probs = top_p_rows(3, 3001, 0.6, seed=64, dtype=torch.bfloat16)
    check_top_p(impl, backend, _on(backend.device, probs), 0.6)


def test_long_rows(impl, backend):
    # V = 40001: longer than any one block of up to 32768 lanes, so each pass loops over blocks.
    probs = as_probs([softmax_row(40001, s, scale=3.0) for s in (71, 72)], FP32)
    check_top_k(impl, backend, _on(backend.device, probs), 50)
    probs = top_p_rows(2, 40001, 0.5, seed=73, dtype=torch.bfloat16, scale=3.0)
    check_top_p(impl, backend, _on(backend.device, probs), 0.5)


def test_row_sliced(impl, backend):
    # probs = base[:, :1000] with rows 1064 apart in memory, the slack NaN: rows read V apart
    # are the wrong rows.
    values = as_probs([softmax_row(1000, s) for s in (81, 82, 83)], torch.bfloat16)
    probs, base = row_sliced(values.to(backend.device))
    flat = base.reshape(-1)[: values.numel()].reshape(values.shape)

    def rows_v_apart() -> torch.Tensor:
        return top_k_expected(torch.nan_to_num(flat, nan=0.0), 64)

    check_top_k(impl, backend, probs, 64, suspects_from=rows_v_apart)


def test_lanes_past_the_row(impl, backend):
    """The same rows, first with NaN in the slack after each row, then with 0.75 there.

    NaN >= pivot is False, so a load without a mask that reads the slack as NaN changes
    nothing; 0.75 is a large probability, which such a load would count and keep.
    """
    values = as_probs([softmax_row(1000, s) for s in (91, 92)], torch.float32)
    probs, base = row_sliced(values.to(backend.device))
    flat = base.reshape(-1)[: values.numel()].reshape(values.shape)

    def rows_v_apart() -> torch.Tensor:
        return top_k_expected(torch.nan_to_num(flat, nan=0.0), 64)

    check_top_k(impl, backend, probs, 64, suspects_from=rows_v_apart)
    with guard_fill(0.75):
        probs = row_sliced(values.to(backend.device))[0]
    got = impl.top_k_renorm(probs, 64)
    want = top_k_expected(values, 64).to(backend.device)
    if isinstance(got, torch.Tensor) and got.shape == want.shape:
        tol = _tol(FP32)
        if not torch.allclose(got.float(), want, atol=tol.atol, rtol=tol.rtol):
            raise DrillFailure(
                dx.MISSING_MASK,
                "top_k_renorm's output is wrong when the 64 elements after each row hold 0.75, "
                "though it came out right when they held NaN",
                "A load reads past the end of the row: mask it (offsets < n_cols) and load the "
                "padded lanes as 0.0, which no pivot above 0 counts.",
                **where_wrong(got, want, tol),
            )


def test_top_p_per_row(impl, backend):
    # p as a [B] tensor: one p per row (FlashInfer accepts either).
    per_row = [0.3, 0.9, 0.6]
    rows = [top_p_rows(1, 500, q, seed=95 + i, dtype=FP32)[0] for i, q in enumerate(per_row)]
    probs = _on(backend.device, torch.stack(rows))
    check_top_p(impl, backend, probs, torch.tensor(per_row, device=backend.device))
