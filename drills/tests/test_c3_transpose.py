"""Drill c3: y = x.T through a shared-memory tile, in CUDA C++. The kernel runs on the GPU
(NVRTC) or on the CPU (the system C++ compiler), and a deep check runs it in the sanitizer
builds for races on the tile and accesses outside x, y and the tile.

The host launches one block of 32 x 8 threads for each 32 x 32 tile of x, the grid rounded up
(drills/host/c3_transpose.py). A transpose computes nothing, so y must be bit for bit x.T.
Which inputs show which mistake:
- shapes that are whole tiles (64 x 128): a tile read back from shared memory as it was written
  puts each 32 x 32 block of y in its place but leaves it untransposed inside, exactly the
  suspect built here (`tile-untransposed`); at ragged edges the same kernel reads slots of the
  tile that were never loaded, which no suspect can predict;
- ragged shapes (37 x 70, 70 x 37, 70 x 70): the last tiles hang over both edges of x. A
  write guarded with the read's bounds (y's row checked against n_rows, its column against
  n_cols, or the read's own row and column reused) leaves part of y never written on these
  shapes and stores outside it (`read-bounds-on-write`); it is named only when y is exactly
  what that guard gives, on the shape and on its transpose;
- every wrong output is looked at again in the sanitizer builds, which name a race on the tile
  (`missing-barrier`: no __syncthreads between writing the tile and reading it back), an access
  past x or y (`out-of-bounds`: an edge tile not guarded) or past the tile (`shared-too-small`)
  with its line; the last test runs them on a passing kernel too.
Shared memory: on the CPU every block starts with its `__shared__` arrays filled with 0xFF bytes
(NaN as a bf16), so a slot read before it was written reads NaN on every run; on a GPU it
holds whatever an earlier block left. Inputs sit between runs of NaN, and the y the host
allocates between sentinel values (a store past y's end lands there).
"""

from __future__ import annotations

import pytest
import torch

from tutor.course import diagnoses as dx
from tutor.harness import (
    DrillFailure,
    Suspect,
    Tolerance,
    expect_clean,
    expect_close,
    guarded,
    row_sliced,
)
from tutor.harness.allocations import fenced_output

DRILL = "c3"
TILE_UNTRANSPOSED = "tile-untransposed"
READ_BOUNDS_ON_WRITE = "read-bounds-on-write"
# The ways a write gets the read's bounds (the ladder has stages for each):
SIZES = "sizes"  # y's row checked against n_rows and its column against n_cols
READ_INDICES = "read-indices"  # the read's own row and column reused for the write

# A transpose copies values: every element must be bit for bit the input's, on every backend.
EXACT = Tolerance(atol=0.0, rtol=0.0)
TILE = 32  # the tile of the host's grid: blocks cover y in 32 x 32 tiles


def _values(shape: tuple[int, int], device: str, seed: int) -> torch.Tensor:
    """bf16 randn values inside a NaN guard: distinct enough that any misplaced element shows."""
    gen = torch.Generator().manual_seed(seed)
    x, _ = guarded(torch.randn(shape, generator=gen).to(torch.bfloat16).to(device))
    return x


def _what(x: torch.Tensor) -> str:
    return f"output for a bfloat16 x of shape {tuple(x.shape)}"


def _untransposed_tiles(x: torch.Tensor) -> list[Suspect]:
    """y whose tiles are in their places but not transposed inside, for each tile size that
    divides x: y[bx*T + a, by*T + b] = x[by*T + a, bx*T + b]."""
    m, n = x.shape
    found = []
    for tile in (16, 32, 64):
        if m % tile or n % tile:
            continue
        blocks = x.reshape(m // tile, tile, n // tile, tile)  # [by, a, bx, b]
        found.append(
            Suspect(
                TILE_UNTRANSPOSED,
                blocks.permute(2, 1, 0, 3).reshape(n, m),
                f"y with each {tile} x {tile} tile in its place but not transposed inside: "
                "the shared tile read back the way it was written",
            )
        )
    return found


def _write_pattern(m: int, n: int, way: str) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Where y = x.T ([n, m]) is written right, where never, and how many stores land outside
    y, when the write of each tile is guarded with the read's bounds, in `way`. A store the
    guard lets through outside y lands on another element of y (or past its end): those
    elements are left out of both masks, since what they hold depends on the order blocks ran
    in."""
    p = torch.arange(-(-n // TILE) * TILE)[:, None]  # y's row, over whole tiles
    q = torch.arange(-(-m // TILE) * TILE)[None, :]  # y's column
    if way == SIZES:
        kept = (p < m) & (q < n)
    else:  # the read's row and column of the same thread: (q - b + a, p - a + b)
        a, b = p % TILE, q % TILE
        kept = (q - b + a < m) & (p - a + b < n)
    inside = (p < n) & (q < m)
    flat = p * m + q
    outside = kept & ~inside
    stray = outside & (flat < n * m)
    hit = torch.zeros(n * m, dtype=torch.bool)
    hit[flat[stray]] = True
    hit = hit.view(n, m)
    right = (kept & inside)[:n, :m] & ~hit
    return right, (~kept & inside)[:n, :m] & ~hit, int(outside.sum())


def _guards_that_fit(impl, x: torch.Tensor) -> dict[str, tuple[int, int]]:
    """way -> (values never written, stores outside y), for each way whose pattern is y
    exactly: right where that guard writes, never written where it does not, with something
    never written. The call runs again with its allocations fenced, so y can be looked at even
    when a store left it."""
    fenced = fenced_output(impl.module.transpose, x)
    m, n = x.shape
    if fenced is None or tuple(fenced[0].shape) != (n, m):
        return {}
    got, want, blank = fenced[0].detach().cpu(), x.detach().cpu().t(), fenced[1].cpu()
    found = {}
    for way in (SIZES, READ_INDICES):
        right, unwritten, outside = _write_pattern(m, n, way)
        fits = torch.equal(got[right], want[right]) and bool(blank[unwritten].all())
        if unwritten.any() and fits:
            found[way] = (int(unwritten.sum()), outside)
    return found


def _read_bounds_on_write(impl, x: torch.Tensor, failure: DrillFailure) -> DrillFailure | None:
    """`read-bounds-on-write` when y is what a write guarded with the read's bounds gives, on
    x and on an x of the transposed shape: a guard that checks one bound twice can leave the
    same part of y unwritten on one shape, but not on both."""
    m, n = x.shape
    found = _guards_that_fit(impl, x)
    if found and m != n:
        other = _guards_that_fit(impl, _values((n, m), x.device, seed=11))
        found = {way: counts for way, counts in found.items() if way in other}
    for way, (unwritten, outside) in found.items():
        stray = (
            f" {outside} stores of the last tiles fell outside y's rows and columns, onto "
            "other elements of y or past its end."
            if outside
            else ""
        )
        if way == SIZES:
            where = (
                f"exactly its rows {m} to {n - 1}"
                if m < n
                else f"exactly its columns {n} to {m - 1}"
            )
            evidence = (
                f"{unwritten} values of y ({n} x {m}) were never written, {where}. The write "
                f"was guarded with x's bounds, y's row checked against n_rows ({m}) and its "
                f"column against n_cols ({n}), but y is [n_cols, n_rows].{stray}"
            )
        else:
            evidence = (
                f"{unwritten} values of y ({n} x {m}) were never written, in a pattern "
                "mirrored across each tile's diagonal: the write was guarded with the row and "
                f"column the thread read from x, not those it writes.{stray}"
            )
        return failure.renamed(READ_BOUNDS_ON_WRITE, evidence, way=way)
    return None


def _check(impl, x: torch.Tensor, want: torch.Tensor | None = None) -> None:
    """y = transpose(x), bit for bit. A wrong y is explained by the suspects, by the write's
    guard, or by the sanitizer builds, which name a race or an access outside the buffers."""
    try:
        y = impl.transpose(x)
        expect_close(
            y,
            x.t().contiguous() if want is None else want,
            what=_what(x),
            tol=EXACT,
            suspects=lambda: _untransposed_tiles(x),
            reads_guarded=True,
        )
    except DrillFailure as failure:
        if dx.rank(failure.diagnosis) in (dx.DRILL_RANK, 1) or failure.diagnosis == dx.NOT_WRITTEN:
            raise
        renamed = _read_bounds_on_write(impl, x, failure)
        if renamed is not None:
            raise renamed from None
        expect_clean(impl, "transpose", x)  # a race or an access outside, named with its line
        raise


@pytest.mark.parametrize("shape", [(64, 128), (128, 64)], ids=["64x128", "128x64"])
def test_whole_tiles(impl, backend, shape):
    """Shapes that are whole 32 x 32 tiles (and 64 x 64): 2 x 4 tiles, then 4 x 2."""
    _check(impl, _values(shape, backend.device, seed=shape[0]))


@pytest.mark.parametrize("shape", [(37, 70), (70, 37), (70, 70)], ids=["37x70", "70x37", "70x70"])
def test_ragged_edges(impl, backend, shape):
    """Multiples of no tile: the last tiles hang over x's last rows and columns, into NaN."""
    _check(impl, _values(shape, backend.device, seed=1000 * shape[0] + shape[1]))


def test_smaller_than_a_tile(impl, backend):
    """5 x 3 and 1 x 40: one block with most of its threads outside x, and a single row."""
    _check(impl, _values((5, 3), backend.device, seed=5))
    _check(impl, _values((1, 40), backend.device, seed=6))


def test_sliced_rows(impl, backend):
    """x [37, 100] bf16 read from rows 129 apart: x's row stride is not n_cols."""
    gen = torch.Generator().manual_seed(7)
    values = torch.randn(37, 100, generator=gen).to(torch.bfloat16).to(backend.device)
    x, _ = row_sliced(values, slack=29)
    _check(impl, x, want=values.t().contiguous())


def test_no_race_and_no_access_outside_the_buffers(impl, backend):
    """x [40, 72] bf16 in the sanitizer builds (on the CPU), with no guard around it: the last
    tiles reach rows 40-63 of x and rows 72-95 of y, past both buffers, so an edge tile not
    guarded is seen; and no thread may read the tile before a barrier after it was written."""
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(40, 72, generator=gen).to(torch.bfloat16).to(backend.device)
    expect_clean(impl, "transpose", x)
