"""Tests for drill t5: `transpose(x)`, y = x.T into a new contiguous tensor, with 2-D tiles.

A transpose computes nothing, so every output must be bit-exact. The inputs make each mistake
visible:
- shapes that are multiples of no tile (37 x 70, ...): edge tiles hang over both edges;
- a transposed view and sliced views: x.stride() is not (N, 1), so strides taken from the
  shape read the wrong elements (`assumes-contiguous`, named by what those reads would give);
- 37 x 128 and 128 x 37: one edge ragged at a time. A kernel that masks only one dimension is
  right on one of them and stores out of bounds on the other (`mask-one-dim`), while one with
  no mask at all fails both (`missing-mask`);
- 37 x 520 and 520 x 37, several tiles along one axis only: program ids mapped to the wrong
  axes cover a corner of the output and leave the rest unwritten (`tile-axes-swapped`), which
  square shapes hide;
- ragged edge tiles also show a tl.trans'd tile stored with the tile's own mask instead of its
  transpose (`trans-mask`): in y the mask is mirrored across each tile's diagonal, so some
  values inside y are never written and some stores land outside it.
Inputs sit between runs of NaN (a load without a mask turns NaN), tensors the learner allocates
between sentinel values (a store without a mask lands there).
"""

from __future__ import annotations

import pytest
import torch

from tutor.harness import (
    DrillFailure,
    Suspect,
    Tolerance,
    expect_close,
    guarded,
    row_sliced,
)
from tutor.harness import diagnoses as dx
from tutor.harness.allocations import fenced_output

DRILL = "t5"
# A lane past x's edges is never stored: a load there that reads 0 leaves y right, so NaN
# from around x that stays wrong with 0 there is no missing mask (tutor.harness.drill_plugin).
ZEROS_PAST_END_HARMLESS = True

ASSUMES_CONTIGUOUS = "assumes-contiguous"
MASK_ONE_DIM = "mask-one-dim"
TILE_AXES_SWAPPED = "tile-axes-swapped"
TRANS_MASK = "trans-mask"

# A transpose copies values: every element must be bit for bit the input's, on every backend.
EXACT = Tolerance(atol=0.0, rtol=0.0)
MIN_TILE = 8  # no tile edge is shorter: a shorter right corner is not a tile's doing
SQUARE_TILES = (16, 32, 64, 128)  # the only tiles whose mask fits the transposed tile's shape


def values(shape: tuple[int, int], dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    """randn values, distinct enough that reading any wrong element shows."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator).to(dtype).to(device)


def contiguous_input(shape, dtype, device, seed) -> torch.Tensor:
    x, _ = guarded(values(shape, dtype, device, seed))
    return x


# ----------------------------------------------------------------------------------------------
# What the mistakes compute
# ----------------------------------------------------------------------------------------------


def stride_suspects(x: torch.Tensor) -> list[Suspect]:
    """x read with strides taken from its shape, (N, 1), or with a column stride of 1.

    torch.as_strided reads x's memory exactly as such a kernel does (the same storage offset),
    NaN slack and guards included.
    """
    m, n = x.shape
    guesses = [
        (
            (n, 1),
            f"x read as if it were contiguous, with strides ({n}, 1) from its shape "
            f"instead of x.stride() = {tuple(x.stride())}",
        ),
        (
            (x.stride(0), 1),
            f"x read with its row stride but a column stride of 1 instead of "
            f"x.stride(1) = {x.stride(1)}",
        ),
    ]
    return [
        Suspect(ASSUMES_CONTIGUOUS, torch.as_strided(x, (m, n), strides).t().contiguous(), story)
        for strides, story in guesses
        if strides != tuple(x.stride())
    ]


def expect_tiles_on_the_right_axes(impl, y, x: torch.Tensor, what: str) -> None:
    """`tile-axes-swapped`: right on a corner that spans one axis fully, unwritten elsewhere.

    With the program ids swapped, the programs along x's rows number cdiv(N, BLOCK_N), those
    along its columns cdiv(M, BLOCK_M): on 37 x 520 every row is covered but only the first
    tile or two of columns. A grid that rounds down keeps all but a partial tile of an axis it
    cuts, more than half of it, and a wrong stride would not leave a right corner this big.
    A swap also fails on the transposed shape (520 x 37); a grid that counts one axis twice
    (cdiv(M, BLOCK) for both) is right there, so that case is left to expect_close.
    """
    if not isinstance(y, torch.Tensor) or tuple(y.shape) != (x.shape[1], x.shape[0]):
        return  # expect_close names these
    right = y.detach().cpu().t() == x.detach().cpu()  # in x's coordinates [M, N]
    if right.all():
        return
    m, n = right.shape
    rows = int(right[:, 0].int().cumprod(0).sum())  # the right run down column 0
    cols = int(right[0, :].int().cumprod(0).sum())  # the right run along row 0
    if min(rows, cols) < MIN_TILE or (rows == m) == (cols == n):
        return
    if (rows == m and 2 * cols >= n) or (cols == n and 2 * rows >= m):
        return  # a grid that rounds down one axis keeps at least half of it: not a swap
    corner = right[:rows, :cols]
    outside = ~right
    outside[:rows, :cols] = False
    wrong_outside = int(outside.sum())
    if corner.all() and wrong_outside >= 0.9 * (m * n - rows * cols):
        flipped, _ = guarded(x.t().contiguous())
        y_flipped = impl.transpose(flipped)
        if isinstance(y_flipped, torch.Tensor) and torch.equal(y_flipped.cpu(), x.cpu()):
            return
        raise DrillFailure(
            TILE_AXES_SWAPPED,
            f"{what}: only x[:{rows}, :{cols}] came out right (of x's {m} x {n}); "
            f"{wrong_outside} of the {m * n - rows * cols} values outside it are wrong",
            "The tiles reached only a corner that spans one axis: the program ids cover the "
            "wrong axes. Axis 0 of the grid has cdiv(M, BLOCK_M) programs; program_id(0) "
            "must pick the tile's rows of x.",
        )


def untransposed_mask(m: int, n: int, block: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Where y = x.T ([n, m], contiguous) is written right and where never, when square tiles
    of `block` store tl.trans(tile) with the tile's own mask instead of tl.trans(mask).

    y[p, q] sits at (a, b) = (p % block, q % block) of its tile, and the store keeps it when the
    tile's mask does at (a, b): row q - b + a of x below m, column p - a + b below n. Stores
    the mask lets through outside y land on other elements of y (or past its end): those
    elements are left out of both masks, since what they hold depends on the order programs
    ran in. Returns (written right, never written), each [n, m].
    """
    rows = torch.arange(-(-n // block) * block)[:, None]  # p, over whole tiles
    cols = torch.arange(-(-m // block) * block)[None, :]  # q
    a, b = rows % block, cols % block
    kept = (cols - b + a < m) & (rows - a + b < n)
    inside = (rows < n) & (cols < m)
    flat = rows * m + cols
    stray = kept & ~inside & (flat < n * m)
    hit = torch.zeros(n * m, dtype=torch.bool)
    hit[flat[stray]] = True
    hit = hit.view(n, m)
    return (kept & inside)[:n, :m] & ~hit, (~kept & inside)[:n, :m] & ~hit


def _untransposed_mask_blocks(impl, x: torch.Tensor) -> dict[int, int]:
    """block -> values never written, for each square tile whose untransposed mask predicts y
    exactly: right where that mask writes it and never written where it does not (nothing
    never written, where it leaves no gap at this shape). The learner's function runs again
    with its allocations fenced, so y can be looked at even when a store landed outside it."""
    fenced = fenced_output(impl.module.transpose, x)
    m, n = x.shape
    if fenced is None or tuple(fenced[0].shape) != (n, m) or fenced[0].stride() != (m, 1):
        return {}
    got, want, blank = fenced[0].detach().cpu(), x.detach().cpu().t(), fenced[1].cpu()
    found = {}
    for block in SQUARE_TILES:
        right, unwritten = untransposed_mask(m, n, block)
        if torch.equal(got[right], want[right]) and bool(blank[unwritten].all()):
            found[block] = int(unwritten.sum())
    return found


def trans_mask_evidence(impl, x: torch.Tensor) -> str | None:
    """The untransposed mask explains y for some square tile, on x (leaving part of y never
    written) and on an x of the swapped shape too: a mask that checks one bound twice can leave
    the same part of y unwritten on one shape, but not on both."""
    m, n = x.shape
    found = {block: count for block, count in _untransposed_mask_blocks(impl, x).items() if count}
    if found and m != n:
        swapped = _untransposed_mask_blocks(impl, contiguous_input((n, m), x.dtype, x.device, 11))
        found = {block: count for block, count in found.items() if block in swapped}
    for block, unwritten in found.items():
        return (
            f"With {block} x {block} tiles, y holds exactly what storing tl.trans(tile) "
            "with the tile's own mask gives: the mask is for x's [BLOCK_M, BLOCK_N] tile, "
            f"so in y it is mirrored across each tile's diagonal. {unwritten} "
            "values inside y were never written, and stores outside y went through. The "
            "stored tile is transposed: its mask must be too, tl.trans(mask)."
        )
    return None


def check_transpose(impl, x: torch.Tensor, *, reads_guarded: bool = True) -> None:
    try:
        y = impl.transpose(x)
    except DrillFailure as failure:
        # Stores outside y (row-stride or missing-mask, from the fence): which, and why?
        if failure.diagnosis in (dx.ROW_STRIDE, dx.MISSING_MASK):
            evidence = trans_mask_evidence(impl, x)
            if evidence is not None:
                raise failure.renamed(TRANS_MASK, evidence) from None
        raise
    what = (
        f"output for a {str(x.dtype).removeprefix('torch.')} x of shape {tuple(x.shape)}, "
        f"strides {tuple(x.stride())}"
    )
    expect_tiles_on_the_right_axes(impl, y, x, what)
    try:
        expect_close(
            y,
            x.t().contiguous(),
            what=what,
            tol=EXACT,
            suspects=lambda: stride_suspects(x),
            reads_guarded=reads_guarded,
        )
    except DrillFailure as failure:
        if dx.rank(failure.diagnosis) != dx.DRILL_RANK:
            evidence = trans_mask_evidence(impl, x)
            if evidence is not None:
                raise failure.renamed(TRANS_MASK, evidence) from None
        raise
    if not y.is_contiguous():
        raise DrillFailure(
            dx.MISMATCH,
            f"{what} has strides {tuple(y.stride())}: the values are right but y is a view",
            "transpose returns a new contiguous [N, M] tensor (like x.t().contiguous()); "
            "allocate y with torch.empty((N, M)) and write every element.",
        )


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        pytest.param((37, 70), torch.float32, id="37x70-fp32"),
        pytest.param((70, 37), torch.bfloat16, id="70x37-bf16"),
        pytest.param((70, 70), torch.float32, id="70x70-fp32-square"),
    ],
)
def test_ragged_edges(impl, backend, shape, dtype):
    # Multiples of no tile: the last tile in each dimension hangs over the edge, into NaN.
    seed = 1000 * shape[0] + shape[1]
    check_transpose(impl, contiguous_input(shape, dtype, backend.device, seed=seed))


def test_transposed_view(impl, backend):
    # x = base.t(): shape (45, 70), strides (1, 45). Its elements go down the columns in memory.
    base, _ = guarded(values((70, 45), torch.float32, backend.device, seed=1))
    check_transpose(impl, base.t())


def test_row_sliced_view(impl, backend):
    # base[:, :100] of rows 100 + 29 long, the slack NaN: strides (129, 1), not (100, 1).
    x, _ = row_sliced(values((37, 100), torch.bfloat16, backend.device, seed=2), slack=29)
    check_transpose(impl, x)


def test_column_strided_view(impl, backend):
    # Every other column of a 37 x 140 tensor, from column 1: strides (140, 2), an offset of 1.
    base, _ = guarded(values((37, 140), torch.float32, backend.device, seed=3))
    check_transpose(impl, base[:, 1::2])


def test_one_ragged_edge_at_a_time(impl, backend):
    # 37 x 128 is ragged only along M, 128 x 37 only along N (128 is a multiple of any tile
    # up to 128). A kernel right on one and storing out of bounds on the other masks one
    # dimension only.
    failures: dict[str, DrillFailure] = {}
    for shape in ((37, 128), (128, 37)):
        try:
            x = contiguous_input(shape, torch.float32, backend.device, seed=shape[0])
            check_transpose(impl, x)
        except DrillFailure as failure:
            failures["x".join(map(str, shape))] = failure
    if len(failures) == 1:
        ((shape, failure),) = failures.items()
        if failure.diagnosis in (dx.MISSING_MASK, dx.CUDA_ERROR):
            ragged = "N (x's columns)" if shape == "128x37" else "M (x's rows)"
            raise failure.renamed(
                MASK_ONE_DIM,
                f"The same kernel is right when only M is ragged or only N is, but not both: "
                f"here it read or wrote past the edge along {ragged}. The mask needs both "
                "conditions, (offsets_m[:, None] < M) & (offsets_n[None, :] < N).",
                message=f"{failure.message} (x of shape {shape})",
            ) from None
    for failure in failures.values():
        raise failure


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param((37, 520), id="37x520"),
        pytest.param((520, 37), id="520x37"),
    ],
)
def test_many_tiles_along_one_axis(impl, backend, shape):
    # Several tiles along one axis, one or two along the other: swapped program ids show.
    check_transpose(impl, contiguous_input(shape, torch.bfloat16, backend.device, seed=shape[1]))
