"""What `tutor bench c3` needs besides the kernel: inputs, bytes moved, torch eager, its lever.

The issue's target at 8192 x 8192 bf16: at least 80% of copy bandwidth, counting one read of x
and one write of y. torch eager's column is x.t().contiguous(). Not met yet: on an H100
(2026-12-07, an nvcc probe, not this bench's timing) the reference took 201 µs, 45% of a
2937 GB/s copy, and torch eager 511 µs; bf16 pairs through the same tiles took 139 µs (66%),
through 64 x 64 tiles 119 µs (77%). The tile without its pad took 242 µs (1.20x).

The lever, `bank-conflicts`: the drill's block is 32 x 8 threads moving a tile of 32 rows
(drills/host/c3_transpose.py), so the shared memory a launch declares, over blockDim.x, is the
width in bytes of one row of the tile. When that width is a whole number of 4-byte banks with a
factor in common with 32, a warp reading a column of the tile (one element from each row) finds
its 32 elements in fewer than 32 banks, and waits for one turn of shared memory per element in
the busiest bank. The finding is claimed only when the learner's kernel is slower than the
reference with the same grid and block, its rows conflict this way and the reference's do not.
"""

from __future__ import annotations

import math

import torch

from tutor.bench.recipe import Recipe, normal
from tutor.bench.rules import Case, Finding, common_numbers
from tutor.lang.i18n import current

BANKS = 32  # shared memory's banks, each 4 bytes wide
BANK_BYTES = 4

# The finding's words in each language the course speaks (the tool's own catalogue holds the
# engine's rules; a drill's lever carries its own text).
TEXT = {
    "en": (
        "{kernel} declares {shared} bytes of shared memory for its {side} x {side} tile: rows "
        "of {row_bytes} bytes, {row_banks} banks each. Unless its columns are swizzled, the "
        "{side} elements of a column fall in {banks} of the 32 banks, {ways} to a bank, and a "
        "warp that reads or writes a column of the tile waits {ways} turns of shared memory "
        "where one would do. It takes {us} µs with the same grid and blocks as the reference "
        "({ref_us} µs), whose rows are {ref_row_bytes} bytes."
    ),
    "zh": (
        "{kernel} 为 {side} x {side} 的 tile 声明了 {shared} 字节共享内存：每行 {row_bytes} "
        "字节，正好占 {row_banks} 个 bank。除非列做了 swizzle，一列的 {side} 个元素只落在 "
        "32 个 bank 中的 {banks} 个上，每个 bank {ways} 个；warp 读或写 tile 的一列，"
        "要等共享内存 {ways} 轮，本来一轮就够。它用了 {us} µs，grid 和 block 与参考实现"
        "相同（参考实现 {ref_us} µs，每行 {ref_row_bytes} 字节）。"
    ),
}


def transpose_eager(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()


def _ways(shared: int, side: int) -> tuple[float, int]:
    """(bytes in a row of the tile, elements of a column that share the busiest bank)."""
    row_bytes = shared / side
    if row_bytes != int(row_bytes) or int(row_bytes) % BANK_BYTES:
        return row_bytes, 1  # rows that do not end on a bank's edge: a column spreads out
    return row_bytes, math.gcd(int(row_bytes) // BANK_BYTES, BANKS)


def bank_conflicts(case: Case) -> Finding | None:
    """The learner's tile rows put a column in a few banks; the reference's do not."""
    mine = case.mine.main
    ref = case.baseline.main if case.baseline else None
    if not mine or not ref or not mine.get("shared") or not ref.get("shared"):
        return None
    if mine.get("block") != ref.get("block") or mine.get("programs") != ref.get("programs"):
        return None  # another split of the work: not the tile's layout alone
    side = (mine.get("block") or [0])[0]
    if not side:
        return None
    row_bytes, ways = _ways(mine["shared"], side)
    ref_row_bytes, ref_ways = _ways(ref["shared"], side)
    if ways < 2 or ref_ways >= ways:
        return None
    numbers = {
        **common_numbers(case),
        "kernel": mine.get("kernel"),
        "shared": mine["shared"],
        "side": side,
        "row_bytes": int(row_bytes),
        "row_banks": int(row_bytes) // BANK_BYTES,
        "banks": BANKS // ways,
        "ways": ways,
        "ref_row_bytes": round(ref_row_bytes, 1) if ref_row_bytes % 1 else int(ref_row_bytes),
    }
    return Finding("bank-conflicts", TEXT.get(current(), TEXT["en"]).format(**numbers), numbers)


RECIPES = [
    Recipe(
        function="transpose",
        dims=("m", "n"),
        make=lambda s, dtype, device, gen: (normal((s["m"], s["n"]), dtype, device, gen),),
        nbytes=lambda s, itemsize: 2 * s["m"] * s["n"] * itemsize,  # x read, y written
        target=80.0,  # a transpose reads rows and writes columns: 80% of copy bandwidth
        eager=transpose_eager,
        levers=(bank_conflicts,),
    ),
]
