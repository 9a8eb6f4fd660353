"""Tests for drill M1: a blocked matmul, c = a @ b, with an fp32 accumulator and any strides.

References are a @ b in fp64 from exactly the values the kernel loads, rounded the way the
backend rounds. Every input sits in a buffer with NaN around it, wide enough for any tile's
overhang, so a load that crosses the end of K without a mask brings NaN into the result (the
loads past M or N only reach outputs that a masked store drops). On a mismatch the output is
compared with what the classic mistakes produce: the partial K block dropped, the pointers
never moved along K (one suspect per power-of-two BLOCK_K for each), the sum stuck in a bf16
accumulator. Then the same values are run in other layouts: a kernel that is right once both
inputs have stride 1 along K advances its pointers by BLOCK_K elements instead of
BLOCK_K * stride. A c whose unwritten part is whole tiles, from a grid of one program per tile,
had its program ids split into tile rows and columns with the wrong divisor.

Shapes are small (a few programs) because the CPU interpreter runs programs one at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tutor.harness import (
    GUARD,
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    blocks_launched,
    expect_close,
    learner,
    raise_if_edges_unwritten,
    round_to,
)
from tutor.harness import diagnoses as dx
from tutor.harness.allocations import never_written
from tutor.harness.inputs import guard_fill, guard_value

DRILL = "m1"

K_TAIL = "k-tail"
ACC_DTYPE = "acc-dtype"
PTR_ADVANCE = "ptr-advance"
EDGE_TILES = "edge-tiles"
PID_SPLIT = "pid-split"

BLOCK_KS = (16, 32, 64, 128, 256)  # the BLOCK_K a learner may pick (tl.dot needs >= 16)
TILES = (16, 32, 64, 128, 256)  # the BLOCK_M and BLOCK_N a learner may pick


# ----------------------------------------------------------------------------------------------
# Tolerances
# ----------------------------------------------------------------------------------------------


def _tol(dtype: torch.dtype, k: int, backend: Backend) -> Tolerance:
    """How far a correct kernel's c may be from the fp64 reference.

    fp32 on the CPU: the interpreter's tl.dot is numpy's fp32 matmul, exact products summed in
    another order than the reference: about 1e-6 of sqrt(K) (the size of c for unit inputs).
    fp32 on the GPU: tl.dot's default input_precision is TF32 (10-bit mantissas), about 5e-4
    relative per product, so c is off by ~5e-4 * sqrt(K) rms and 4-5 times that at worst over
    a few thousand values. The reference solution asks for "ieee" and is far inside this; a
    TF32 kernel is a fair choice too and passes. Every suspect below is off by O(1).
    bf16: products are exact and summed in fp32 on both backends; the result's rounding to
    bf16 can move by one ulp (at most 2**-7 relative) when the fp32 sum differs in its last bits.
    """
    scale = k**0.5
    if dtype == torch.float32:
        return (
            Tolerance(atol=1e-5 * scale, rtol=1e-5)
            if backend.is_cpu
            else Tolerance(atol=4e-3 * scale, rtol=2e-3)
        )
    return Tolerance(atol=1e-4 * scale, rtol=2**-7)


# ----------------------------------------------------------------------------------------------
# Inputs and layouts
# ----------------------------------------------------------------------------------------------


def _guarded(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A contiguous copy of `values` with NaN on both sides, more than any tile overhangs.

    A tile of 256 rows past the end of a [R, C] tensor reaches 256 * C elements further: the
    harness's `guarded` keeps 16384, too few for K = 300, so this keeps 257 * max(R, C).
    """
    guard = 257 * max(values.shape)
    buffer = torch.full(
        (values.numel() + 2 * guard,), guard_value(), dtype=values.dtype, device=values.device
    )
    view = buffer[guard : guard + values.numel()].view(values.shape)
    view.copy_(values)
    return view, buffer


def contiguous(values: torch.Tensor) -> torch.Tensor:
    return _guarded(values)[0]


def transposed(values: torch.Tensor) -> torch.Tensor:
    """values as the transpose of a contiguous tensor: the stride along dim 0 is 1."""
    return _guarded(values.t().contiguous())[0].t()


def column_slice(values: torch.Tensor) -> torch.Tensor:
    """values as the first columns of a wider tensor: rows 7 elements longer in memory, which
    hold what the guards hold (NaN, or 0 in guard_fill)."""
    rows, cols = values.shape
    slack = torch.full((rows, cols + 7), guard_value(), dtype=values.dtype, device=values.device)
    wide, _ = _guarded(slack)
    view = wide[:, :cols]
    view.copy_(values)
    return view


Layout = Callable[[torch.Tensor], torch.Tensor]
# (a's layout, b's layout); "unit-k" has stride 1 along K in both, which hides ptr-advance.
LAYOUTS: dict[str, tuple[Layout, Layout]] = {
    "contiguous": (contiguous, contiguous),
    "unit-k": (contiguous, transposed),
    "a-transposed": (transposed, transposed),
    "a-transposed-b-contiguous": (transposed, contiguous),
    "a-sliced-b-transposed": (column_slice, transposed),
}


def _randn(shape: tuple[int, int], seed: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=gen).to(device=device, dtype=dtype)


# ----------------------------------------------------------------------------------------------
# The reference, the suspects, and the check every test runs
# ----------------------------------------------------------------------------------------------


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b in fp64, returned as fp32 (not yet rounded to a's dtype)."""
    return (a.double() @ b.double()).float()


def never_advanced(a: torch.Tensor, b: torch.Tensor, block_k: int, stuck: str) -> torch.Tensor:
    """a @ b from a K loop whose `stuck` pointers ("a", "b" or "both") never move along K.

    Block i keeps its mask (lanes below K - i * BLOCK_K), but a stuck pointer reads the first
    columns of a (or rows of b) again instead of block i's.
    """
    k = a.shape[1]
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for start in range(0, k, block_k):
        width = min(block_k, k - start)
        a_from = 0 if stuck in ("a", "both") else start
        b_from = 0 if stuck in ("b", "both") else start
        out += a[:, a_from : a_from + width].double() @ b[b_from : b_from + width].double()
    return out.float()


def strides_swapped(t: torch.Tensor) -> torch.Tensor | None:
    """`t` as a kernel reads it when the wrapper passes its two strides the other way round,
    or None where that read leaves the memory `t` lies in (or meets the NaN around it)."""
    rows, cols = t.shape
    reach = t.storage_offset() + (rows - 1) * t.stride(1) + (cols - 1) * t.stride(0)
    if reach >= t.untyped_storage().nbytes() // t.element_size():
        return None
    read = torch.as_strided(t, t.shape, (t.stride(1), t.stride(0)), t.storage_offset())
    return None if bool(read.isnan().any()) else read


def suspects(a: torch.Tensor, b: torch.Tensor, backend: Backend) -> list[Suspect]:
    """What c would be for the mistakes that can be computed from the values alone."""
    k = a.shape[1]
    found = []
    # No ladder of their own: they say what was read, and contest a named mistake that gives
    # the same c only because of the test's values (b's first rows all ones, read over again).
    for name, misread in (("a", strides_swapped(a)), ("b", strides_swapped(b))):
        if misread is not None:
            pair = (misread, b) if name == "a" else (a, misread)
            found.append(
                Suspect(
                    dx.MISMATCH,
                    round_to(reference(*pair), a.dtype, backend),
                    f"a @ b with {name} read through its two strides passed the other way "
                    f"round (stride_{name}{'m' if name == 'a' else 'k'} and "
                    f"stride_{name}{'k' if name == 'a' else 'n'} swapped)",
                )
            )
    for block_k in (block for block in BLOCK_KS if block < k):
        for stuck, which in (("both", "a_ptrs and b_ptrs"), ("a", "a_ptrs"), ("b", "b_ptrs")):
            found.append(
                Suspect(
                    PTR_ADVANCE,
                    round_to(never_advanced(a, b, block_k, stuck), a.dtype, backend),
                    f"a loop over K blocks of {block_k} whose {which} never move along K: "
                    "every block reads the first one again",
                )
            )
    # A tail claim needs a tail: K no multiple of the block, and whole blocks before it (with
    # none kept, nothing was multiplied at all, which is no tail's doing).
    for kept in sorted({k - k % block for block in BLOCK_KS if k % block and k > block}):
        found.append(
            Suspect(
                K_TAIL,
                round_to(reference(a[:, :kept], b[:kept]), a.dtype, backend),
                f"a @ b over the first {kept} of the K = {k} columns only: the last, partial K "
                f"block (K is no multiple of BLOCK_K) was left out of the loop",
            )
        )
    return found


def _blank(out: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """Where c was never written: still the fill value of torch.empty, or 0 from torch.zeros
    where the reference is not 0."""
    out = out.detach()
    return never_written(out) | ((out == 0) & (want != 0))


def _whole_tiles(blank: torch.Tensor, bm: int, bn: int) -> bool:
    """Whether every bm x bn tile of `blank` (edge tiles cut short) is all True or all False."""
    m, n = blank.shape
    rows, cols = -(-m // bm), -(-n // bn)
    pad = (0, cols * bn - n, 0, rows * bm - m)
    counts = torch.nn.functional.pad(blank.int(), pad).reshape(rows, bm, cols, bn).sum((1, 3))
    sizes = torch.nn.functional.pad(torch.ones_like(blank, dtype=torch.int32), pad)
    sizes = sizes.reshape(rows, bm, cols, bn).sum((1, 3))
    return bool(((counts == 0) | (counts == sizes)).all())


def _rounded_down_grid(blank: torch.Tensor, programs: int, tiles: tuple[int, ...]) -> bool:
    """Whether `blank` is what a grid of `programs` leaves when its count of tile rows, of tile
    columns, or both, rounds down (M // BM instead of cdiv(M, BM)): the last rows or columns."""
    m, n = blank.shape
    for bm in tiles:
        for bn in tiles:
            for rows in {m // bm, -(-m // bm)}:
                for cols in {n // bn, -(-n // bn)}:
                    if rows * cols != programs:
                        continue
                    edge = torch.zeros_like(blank)
                    edge[rows * bm :, :] = True
                    edge[:, cols * bn :] = True
                    if torch.equal(blank, edge):
                        return True
    return False


def _pid_split(
    failure: DrillFailure,
    out: object,
    want: torch.Tensor,
    tol: Tolerance,
    programs: int | None,
    tiles: tuple[int, ...] = TILES,
) -> None:
    """Raise pid-split when whole tiles of c were never written, the rest is right, and the grid
    had one program per tile: some programs computed the same tile (or one outside c).

    A grid that rounds down leaves the last tile rows or columns unwritten with fewer programs
    than tiles: that pattern is left to grid-too-small.
    """
    if failure.diagnosis not in (dx.GRID_TOO_SMALL, dx.OUTPUT_UNTOUCHED, dx.MISMATCH):
        return
    if not isinstance(out, torch.Tensor) or out.shape != want.shape or not programs:
        return
    blank = _blank(out, want)
    if not blank.any() or blank.all() or _rounded_down_grid(blank, programs, tiles):
        return
    close = torch.isclose(out.float(), want.float(), atol=tol.atol, rtol=tol.rtol)
    if not bool(close[~blank].all()):
        return
    m, n = out.shape
    for bm in tiles:
        for bn in tiles:
            rows, cols = -(-m // bm), -(-n // bn)
            if rows * cols != programs or not _whole_tiles(blank, bm, bn):
                continue
            skipped = int(blank[::bm, ::bn].sum())
            raise failure.renamed(
                PID_SPLIT,
                f"Your grid had {programs} programs, one per tile of c in {bm} x {bn} tiles "
                f"({rows} tile rows x {cols} tile columns), yet {skipped} of those tiles were "
                "never written and the others are right: some programs computed the same tile "
                "(or one outside c). Each program's tile comes from its program id: a wrong "
                "divisor, the grid's axes swapped, or an offset scaled by the other block "
                "computes some tiles twice and others never.",
            ) from None


def _call(impl, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """impl.matmul(a, b); a store past the end of c means the edge tiles were not masked."""
    try:
        return impl.matmul(a, b)
    except DrillFailure as failure:
        if failure.diagnosis != dx.MISSING_MASK:
            raise
        raise failure.renamed(
            EDGE_TILES,
            f"c is {a.shape[0]} x {b.shape[1]}, no multiple of your tile: the bottom and right "
            "tiles stick out of it, and their lanes past M or N were stored.",
        ) from None


def _misreads_stay_in_guards(a_values: torch.Tensor, b_values: torch.Tensor) -> bool:
    """Whether a and b are small enough to be laid out again for a probe: a kernel that reads
    them with the wrong strides reaches about one tensor's length past them, which the NaN
    guards then hold. Past that, on the CPU, it can kill the test process (on a GPU, fault)."""
    return max(a_values.numel(), b_values.numel()) <= GUARD


def _rerun(impl, backend: Backend, a_values, b_values, layout: str):
    """(c, its reference, the tolerance) for the same values laid out as `layout`; None when
    the call fails or c is not a tensor of the reference's shape and dtype."""
    lay_a, lay_b = LAYOUTS[layout]
    try:
        c = _call(impl, lay_a(a_values), lay_b(b_values))
    except DrillFailure:
        return None
    want = round_to(reference(a_values, b_values), a_values.dtype, backend)
    if not (isinstance(c, torch.Tensor) and c.shape == want.shape and c.dtype == want.dtype):
        return None
    return c, want, _tol(a_values.dtype, a_values.shape[1], backend)


def _close(c: torch.Tensor, want: torch.Tensor, tol: Tolerance) -> bool:
    return torch.allclose(c.float(), want.float(), atol=tol.atol, rtol=tol.rtol)


def _looks_right(impl, backend: Backend, a_values, b_values, layout: str) -> bool:
    """Whether the same values, laid out as `layout`, give the right c."""
    again = _rerun(impl, backend, a_values, b_values, layout)
    return again is not None and _close(*again)


def check_matmul(
    impl,
    backend: Backend,
    a_values: torch.Tensor,
    b_values: torch.Tensor,
    layout: str,
    extra_suspects: tuple[Suspect, ...] = (),
) -> None:
    """c = matmul(a, b) with a and b laid out as `layout`, diagnosed when wrong."""
    lay_a, lay_b = LAYOUTS[layout]
    a, b = lay_a(a_values), lay_b(b_values)
    k = a.shape[1]
    c = _call(impl, a, b)
    programs = learner.last_call.programs  # before any re-run asks for other grids
    tiles = blocks_launched(c, TILES) if isinstance(c, torch.Tensor) else TILES
    want = reference(a_values, b_values)
    try:
        expect_close(
            c,
            round_to(want, a.dtype, backend),
            what="c",
            tol=_tol(a.dtype, k, backend),
            suspects=lambda: [*suspects(a_values, b_values, backend), *extra_suspects],
            fp32_rerun=lambda: _call(impl, lay_a(a_values.float()), lay_b(b_values.float())),
            fp32_expected=want,
            reads_guarded=True,
        )
    except DrillFailure as failure:
        rounded, tol = round_to(want, a.dtype, backend), _tol(a.dtype, k, backend)
        _pid_split(failure, c, rounded, tol, programs, tiles)
        raise_if_edges_unwritten(failure, c, rounded, tol, "c")
        if failure.diagnosis in (
            dx.MISMATCH,
            dx.NAN_OR_INF,
            dx.TAIL_WRONG,
            dx.MISSING_MASK,
        ) and _misreads_stay_in_guards(a_values, b_values):
            # NaN can also come from a slice's slack read with the wrong strides: layout first.
            _diagnose_layout(impl, backend, a_values, b_values, layout, failure)
        zeros = (
            _with_zeros_around(impl, backend, a_values, b_values, layout)
            if failure.diagnosis == dx.MISSING_MASK and failure.guard_evidence is not None
            else None
        )
        if zeros == "right":
            raise failure.renamed(
                K_TAIL,
                "NaN came in from just past the end of a or b along K (the test puts NaN "
                f"there): with K = {k}, the last K block is partial and its lanes past K "
                "must be masked. Loads past M or N only reach outputs the store drops.",
            ) from None
        if zeros == "wrong":
            raise failure.renamed(
                dx.MISMATCH,
                "NaN came in from memory around a and b, and with 0 there c is still wrong: "
                "the loads reach the wrong places (a's or b's strides passed in the wrong "
                "order, or the pointers stepped by the wrong one), not only lanes past K.",
            ) from None
        if failure.diagnosis == dx.BF16_NO_UPCAST:
            raise failure.renamed(
                ACC_DTYPE,
                "The same kernel is right on fp32 inputs, and tl.dot itself is exact for bf16: "
                "what goes wrong is the sum along K, kept in bf16 between K blocks.",
            ) from None
        raise


def _with_zeros_around(impl, backend: Backend, a_values, b_values, layout: str) -> str | None:
    """How c comes out when the memory around a and b (and a slice's slack) holds 0 instead of
    NaN: "right" when the NaN came from lanes past K, which add nothing once they read 0;
    "wrong" when finite values are wrong: the loads went elsewhere (strides swapped, pointers
    stepped by the wrong stride), not just past K; None when c is right but for NaN (the kernel
    makes it: 0 * inf)."""
    with guard_fill(0.0):  # the layout the test ran already: no new reach past the guards
        again = _rerun(impl, backend, a_values, b_values, layout)
    if again is None:
        return None
    c, want, tol = again
    finite = torch.isfinite(c)
    if not _close(c[finite], want[finite], tol):
        return "wrong"  # finite values wrong: not NaN made by the kernel, nor lanes past K
    return "right" if bool(finite.all()) else None


def _diagnose_layout(impl, backend, a_values, b_values, layout: str, failure: DrillFailure) -> None:
    """Name ptr-advance (or ignored strides) when another layout of the same values is right."""
    strides = (
        f"a's strides {LAYOUTS[layout][0](a_values).stride()}, "
        f"b's {LAYOUTS[layout][1](b_values).stride()}"
    )
    if layout != "unit-k" and _looks_right(impl, backend, a_values, b_values, "unit-k"):
        raise failure.renamed(
            PTR_ADVANCE,
            f"The same values are right when a and b both have stride 1 along K, wrong with "
            f"{strides}: the pointers move BLOCK_K elements per K block, not "
            "BLOCK_K * stride_ak (and BLOCK_K * stride_bk).",
        ) from None
    if layout != "contiguous" and _looks_right(impl, backend, a_values, b_values, "contiguous"):
        raise failure.renamed(
            dx.ROW_STRIDE,
            f"The same values are right in contiguous tensors, wrong with {strides}: the kernel "
            "assumes a layout instead of using the strides it is given.",
        ) from None


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------

# (M, K, N): no dimension is a multiple of 8, so every tile size leaves partial edge tiles and
# a partial last K block. K = 100 drops 4, 36 or 100 columns with BLOCK_K = 32, 64 or 128;
# K = 300 spans two or more K blocks for any BLOCK_K up to 256.
SHAPES = [
    pytest.param((100, 100, 70), torch.float32, id="100x100x70-fp32"),
    pytest.param((37, 300, 45), torch.float32, id="37x300x45-fp32"),
    pytest.param((100, 100, 70), torch.bfloat16, id="100x100x70-bf16"),
    pytest.param((5, 300, 3), torch.bfloat16, id="5x300x3-bf16"),
]


@pytest.mark.parametrize(("shape", "dtype"), SHAPES)
def test_matmul_contiguous(impl, backend, shape, dtype):
    """Contiguous a [M, K] and b [K, N]: b's stride along K is N, not 1."""
    m, k, n = shape
    a = _randn((m, k), seed=m + k, dtype=dtype, device=backend.device)
    b = _randn((k, n), seed=k + n, dtype=dtype, device=backend.device)
    check_matmul(impl, backend, a, b, "contiguous")


@pytest.mark.parametrize(
    "layout", ["unit-k", "a-transposed", "a-transposed-b-contiguous", "a-sliced-b-transposed"]
)
def test_matmul_strided(impl, backend, layout):
    """Transposed views and a column slice, read in place: c must not depend on the layout.

    unit-k (a contiguous, b = a transposed [N, K] tensor) has stride 1 along K in both inputs,
    where advancing by BLOCK_K without the stride happens to be right; the others do not.
    """
    m, k, n = 45, 300, 37
    a = _randn((m, k), seed=3, dtype=torch.float32, device=backend.device)
    b = _randn((k, n), seed=4, dtype=torch.float32, device=backend.device)
    check_matmul(impl, backend, a, b, layout)


def test_matmul_tile_grid_not_square(impl, backend):
    """c of 384 x 256: for any power-of-two tiles but 256 x 128 the tile grid is not square
    (3 x 2 tiles of 128), so program ids split with the wrong divisor compute some tiles
    twice and leave others unwritten. M and N are multiples of 128, so a grid that rounds
    down can only drop the last 128 rows (tiles of 256). K = 20: one K block."""
    a = _randn((384, 20), seed=11, dtype=torch.float32, device=backend.device)
    b = _randn((20, 256), seed=12, dtype=torch.float32, device=backend.device)
    check_matmul(impl, backend, a, b, "contiguous")


def test_matmul_bf16_accumulator(impl, backend):
    """bf16 inputs whose sum along K a bf16 accumulator cannot hold.

    The first 256 products are 1 (c reaches 256, exact in bf16 and in any order); the 4096 after
    them are at most 7/64 * 1/32 = 0.0034, so even a 256-wide K block adds less than 0.875:
    less than half a bf16 ulp at 256 (ulp 2), and a bf16 accumulator rounds back to 256 every
    time. An fp32 accumulator keeps all of them: c is about 268, 6 bf16 ulps higher. Every value
    is a multiple of 2**-10 below 512, so the fp32 sum is exact in any order.
    """
    m, n, k_big, k_small = 20, 20, 256, 4096
    gen = torch.Generator().manual_seed(9)
    choices = torch.tensor([1 / 16, 3 / 32, 7 / 64])
    a = torch.cat([torch.ones(m, k_big), torch.full((m, k_small), 1 / 32)], dim=1)
    b = torch.cat(
        [torch.ones(k_big, n), choices[torch.randint(0, 3, (k_small, n), generator=gen)]], dim=0
    )
    a, b = (t.to(device=backend.device, dtype=torch.bfloat16) for t in (a, b))
    stuck = Suspect(
        ACC_DTYPE,
        torch.full((m, n), 256.0, device=backend.device, dtype=torch.bfloat16),
        "256, the sum of the first K block(s): every later block adds less than "
        "half a bf16 ulp, so a bf16 accumulator rounds it away",
    )
    check_matmul(impl, backend, a, b, "contiguous", extra_suspects=(stuck,))


def test_matmul_aligned_rows(impl, backend):
    """bf16 rows whose lengths are multiples of 16 bytes (K = 328, N = 112), as a model's
    activations and weights are: a kernel may take another path for them (tensor descriptors
    need such rows). Tiles of 32 and more still leave edge tiles and a partial last K block;
    c stays small enough that even an unmasked 256 x 256 tile ends inside its guard memory."""
    m, k, n = 120, 328, 112
    a = _randn((m, k), seed=13, dtype=torch.bfloat16, device=backend.device)
    b = _randn((k, n), seed=14, dtype=torch.bfloat16, device=backend.device)
    check_matmul(impl, backend, a, b, "contiguous")
