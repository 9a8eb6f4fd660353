"""Tests for drill F2: append_paged_kv_cache, one decode step's k and v written into a paged cache.

Each test builds a small paged cache the way an engine holds one: physical pages handed out in
a shuffled order (so a page looked up in the wrong row of page_table lands somewhere visibly
wrong), free slots holding a canary value and the slots of earlier tokens holding their history
(so any stray write shows), the whole cache inside NaN guards. Positions are ragged, distinct,
and sit on both sides of page boundaries; page_size is neither H nor D. After the call the
whole cache must equal the old one with exactly B slots rewritten; on a mismatch the test
replays each known mistake's writes on a copy of the cache's memory (the pages and slots that
mistake computes, at the strides it assumes) and names the one the output matches.

The values are copied, never computed, so every comparison is exact on both backends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

from tutor.harness import (
    GUARD,
    Backend,
    DrillFailure,
    Learner,
    Suspect,
    Tolerance,
    expect_close,
    expect_unchanged,
    guarded,
)
from tutor.harness import diagnoses as dx

DRILL = "f2"

# A copy: the cache must hold k's and v's bits exactly, in any dtype, on either backend.
EXACT = Tolerance(atol=0.0, rtol=0.0)
CANARY = -1000.0  # what a free slot holds: exact in fp16 and bf16, far from any k or v value
SEED = 58


@dataclass(frozen=True)
class Spec:
    """A batch of B sequences: H heads of D values, pages of page_size slots, the table's width
    (max_pages) and each sequence's position (its length before the append)."""

    heads: int
    head_dim: int
    page_size: int
    max_pages: int
    positions: tuple[int, ...]

    @property
    def batch(self) -> int:
        return len(self.positions)


# page_size 4 is neither H = 3 nor D = 40, and D = 40 leaves 24 padded lanes in a block of 64.
# Positions 3 and 15 are last slots of their pages, 4 a first slot, 17 on the fifth page. Every
# logical page is below B, so reading the table with the page as the row stays in the table.
SMALL = Spec(heads=3, head_dim=40, page_size=4, max_pages=6, positions=(9, 3, 4, 17, 15))
# page_size 5 (not a power of two), two heads; position 0 is an empty sequence's first token,
# 24 the last slot of sequence 1's table (one slot on is the first of sequence 2's table).
WIDE = Spec(heads=2, head_dim=64, page_size=5, max_pages=5, positions=(0, 24, 5, 21, 9, 14))

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


# ----------------------------------------------------------------------------------------------
# Inputs: the batch, its page table, and the cache in each layout
# ----------------------------------------------------------------------------------------------


@dataclass
class Batch:
    """The new tokens and where they go, as the function receives them."""

    spec: Spec
    k: torch.Tensor  # [B, H, D] as passed (contiguous or a slice of qkv)
    v: torch.Tensor
    k_in: torch.Tensor  # the same values, contiguous, kept for the references
    v_in: torch.Tensor
    page_table: torch.Tensor  # [B, max_pages] int32 as passed
    table_memory: torch.Tensor  # the contiguous table it is a view of (wider when sliced)
    positions: torch.Tensor
    input_buffers: tuple[torch.Tensor, ...]  # the guarded buffers k and v live in
    num_pages: int


def make_batch(
    spec: Spec,
    dtype: torch.dtype,
    device: str,
    *,
    seed: int = SEED,
    qkv: bool = False,
    table_slack: int = 0,
    positions_dtype: torch.dtype = torch.int64,
) -> Batch:
    """k, v and a page table whose rows are disjoint sets of pages in a shuffled order.

    Every entry of the table, used or not, is a page of its own sequence: a lookup in the wrong
    place finds another sequence's page (or a later page of the same one), never garbage.
    `table_slack` columns more make page_table a slice of a wider table, as engines keep one.
    Pages past the table's (max_pages of them) stay free, so a write that runs past a page
    stays inside the cache.
    """
    gen = torch.Generator().manual_seed(seed)
    batch, heads, head_dim = spec.batch, spec.heads, spec.head_dim
    k_in = torch.randn(batch, heads, head_dim, generator=gen).to(device, dtype)
    v_in = torch.randn(batch, heads, head_dim, generator=gen).to(device, dtype)
    width = spec.max_pages + table_slack
    table_memory = torch.randperm(batch * width, generator=gen).view(batch, width)
    table_memory = table_memory.to(device, torch.int32)
    page_table = table_memory[:, : spec.max_pages]
    positions = torch.tensor(spec.positions, dtype=positions_dtype, device=device)
    if qkv:
        k, v, buffers = _qkv_slices(k_in, v_in, gen)
    else:
        (k, k_buffer), (v, v_buffer) = guarded(k_in), guarded(v_in)
        buffers = (k_buffer, v_buffer)
    return Batch(
        spec, k, v, k_in, v_in, page_table, table_memory, positions, buffers,
        num_pages=batch * width + spec.max_pages,
    )  # fmt: skip


Q_HEADS = 4  # query heads of the fused projection: 4 query heads over H = 2 or 3 KV heads


def _qkv_slices(k_in: torch.Tensor, v_in: torch.Tensor, gen: torch.Generator):
    """k and v as the views a fused qkv projection gives: [B, Q_HEADS + 2H, D] cut by heads.

    Tokens are (Q_HEADS + 2H) * D apart, not H * D; the query heads hold other random values,
    so reading them writes wrong, finite numbers into the cache.
    """
    batch, heads, head_dim = k_in.shape
    qkv = torch.randn(batch, Q_HEADS + 2 * heads, head_dim, generator=gen).to(k_in)
    qkv[:, Q_HEADS : Q_HEADS + heads] = k_in
    qkv[:, Q_HEADS + heads :] = v_in
    stored, buffer = guarded(qkv)
    return stored[:, Q_HEADS : Q_HEADS + heads], stored[:, Q_HEADS + heads :], (buffer,)


# How each layout lays out the [num_pages, page_size, H, D] caches in memory. "pairs": k and v
# pages side by side in one tensor, as FlashInfer's kv_cache [num_pages, 2, ...] keeps them.
LAYOUTS = ("NHD", "HND", "NHD pairs", "HND pairs")


@dataclass
class Cache:
    """k_cache and v_cache, the memory behind them, and what they held before the call."""

    layout: str
    k: torch.Tensor  # [num_pages, page_size, H, D] views
    v: torch.Tensor
    k_buffer: torch.Tensor  # the guarded 1-D buffer each lives in (the same one for pairs)
    v_buffer: torch.Tensor
    k_before: torch.Tensor  # logical [num_pages, page_size, H, D] copies of the old contents
    v_before: torch.Tensor
    memory_before: dict[int, torch.Tensor]  # id(buffer) -> a copy of it before the call

    def guards(self) -> torch.Tensor:
        """The NaN memory on both sides of the caches' buffers."""
        buffers = (
            (self.k_buffer,) if self.k_buffer is self.v_buffer else (self.k_buffer, self.v_buffer)
        )
        return torch.cat([torch.cat((b[:GUARD], b[-GUARD:])) for b in buffers]).clone()


def make_cache(batch: Batch, layout: str, seed: int = SEED + 1) -> Cache:
    """The caches before the append: each sequence's earlier tokens (slots before its position
    in its own pages) hold history values, every other slot the canary."""
    spec = batch.spec
    gen = torch.Generator().manual_seed(seed)
    shape = (batch.num_pages, spec.page_size, spec.heads, spec.head_dim)
    olds = []
    for _ in range(2):
        old = torch.full(shape, CANARY)
        for b, position in enumerate(spec.positions):
            for earlier in range(position):
                page = int(batch.table_memory[b, earlier // spec.page_size])
                old[page, earlier % spec.page_size] = torch.randn(
                    spec.heads, spec.head_dim, generator=gen
                )
        olds.append(old.to(batch.k_in))
    k_old, v_old = olds
    head_major = layout.startswith("HND")
    if layout.endswith("pairs"):
        pair = torch.stack((k_old, v_old), dim=1)  # [P, 2, S, H, D]
        stored, buffer = guarded(pair.transpose(2, 3) if head_major else pair)
        k, v = stored[:, 0], stored[:, 1]
        k_buffer = v_buffer = buffer
    else:
        (k, k_buffer), (v, v_buffer) = (
            guarded(old.transpose(1, 2) if head_major else old) for old in (k_old, v_old)
        )
    if head_major:
        k, v = k.transpose(1, 2), v.transpose(1, 2)
    before = {id(k_buffer): k_buffer.clone(), id(v_buffer): v_buffer.clone()}
    return Cache(layout, k, v, k_buffer, v_buffer, k_old, v_old, before)


# ----------------------------------------------------------------------------------------------
# The reference, and the caches each mistake would leave
# ----------------------------------------------------------------------------------------------


def expected(batch: Batch, cache: Cache) -> tuple[torch.Tensor, torch.Tensor]:
    """The old caches with k[b] and v[b] in slot positions[b] % page_size of page
    page_table[b, positions[b] // page_size], and nothing else changed."""
    size = batch.spec.page_size
    k_want, v_want = cache.k_before.clone(), cache.v_before.clone()
    for b, position in enumerate(batch.spec.positions):
        page = int(batch.page_table[b, position // size])
        k_want[page, position % size] = batch.k_in[b]
        v_want[page, position % size] = batch.v_in[b]
    return k_want, v_want


# Where a mistake puts each token: for token b, the (page, slot) pairs it writes at (None when
# the mistake would read the table outside its memory), or None when it skips the token.
Places = list[list[tuple[int | None, int]]]
Strides = tuple[int, int, int]  # (page, slot, head), in elements


def replayed(
    batch: Batch,
    cache: Cache,
    places: Places,
    strides: Strides | None = None,
    heads: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The caches after writing token b's first `heads` heads of k and v at each of places[b],
    at `strides` (the cache's own when None), on a copy of the cache's memory.

    None when that is not a definite outcome: a page the table cannot give, a write outside
    the cache's memory (the guards catch that), or two writes to one place (on the GPU the
    order programs run in would decide which stays).
    """
    spec = batch.spec
    heads = spec.heads if heads is None else heads
    strides = strides or tuple(cache.k.stride()[:3])
    copies = {key: memory.clone() for key, memory in cache.memory_before.items()}
    written = {key: torch.zeros(copy.numel(), dtype=torch.bool) for key, copy in copies.items()}
    lanes = torch.arange(heads)[:, None] * strides[2] + torch.arange(spec.head_dim)[None, :]
    for view, values, buffer in (
        (cache.k, batch.k_in, cache.k_buffer),
        (cache.v, batch.v_in, cache.v_buffer),
    ):
        memory, taken = copies[id(buffer)], written[id(buffer)]
        for b, token_places in enumerate(places):
            for page, slot in token_places:
                if page is None:
                    return None
                at = (
                    view.storage_offset() + page * strides[0] + slot * strides[1] + lanes
                ).reshape(-1)
                if int(at.min()) < GUARD or int(at.max()) >= memory.numel() - GUARD:
                    return None
                if bool(taken[at].any()):
                    return None
                taken[at] = True
                memory[at.to(memory.device)] = values[b, :heads].reshape(-1)
    k_copy, v_copy = copies[id(cache.k_buffer)], copies[id(cache.v_buffer)]
    return (
        torch.as_strided(k_copy, cache.k.shape, cache.k.stride(), cache.k.storage_offset()),
        torch.as_strided(v_copy, cache.v.shape, cache.v.stride(), cache.v.storage_offset()),
    )


def _plus(page: int | None, pages: int) -> int | None:
    return None if page is None else page + pages


def suspects(batch: Batch, cache: Cache, which: int) -> list[Suspect]:
    """What each known mistake leaves in k_cache (which = 0) or v_cache (which = 1)."""
    spec = batch.spec
    size, heads, head_dim = spec.page_size, spec.heads, spec.head_dim
    positions = spec.positions
    flat_table = batch.table_memory.reshape(-1).cpu()
    row_stride = batch.page_table.stride(0)

    def entry(row: int, col: int, stride: int = row_stride) -> int | None:
        """page_table[row, col] as a kernel reads it: from the table's memory, rows `stride`
        apart (None outside it)."""
        index = row * stride + col
        return int(flat_table[index]) if 0 <= index < flat_table.numel() else None

    def at(b: int, position: int) -> tuple[int | None, int]:
        return entry(b, position // size), position % size

    own = [at(b, p) for b, p in enumerate(positions)]
    page_stride, slot_stride, head_stride = cache.k.stride()[:3]
    cases: list[tuple[str, str, Places, Strides | None, int | None]] = [
        (
            "wrong-sequence-table",
            "every token's page looked up in row 0 of page_table (sequence 0's pages)",
            [[(entry(0, p // size), p % size)] for p in positions],
            None,
            None,
        ),
        (
            "wrong-sequence-table",
            "the page read at page_table[positions[b] // page_size, b]: the logical page used "
            "as the row and the token as the column",
            [[(entry(p // size, b), p % size)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "wrong-sequence-table",
            "the page read at page_table[positions[b] // page_size, 0]: the logical page used "
            "as the row of the table",
            [[(entry(p // size, 0), p % size)] for p in positions],
            None,
            None,
        ),
        (
            "wrong-sequence-table",
            "page_table's rows taken as max_pages apart, where the table is a slice of a wider "
            "one whose rows are page_table.stride(0) apart",
            [[(entry(b, p // size, spec.max_pages), p % size)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "wrong-sequence-table",
            "the logical page positions[b] // page_size used as the physical page: page_table "
            "never read",
            [[(p // size, p % size)] for p in positions],
            None,
            None,
        ),
        (
            "page-slot-swapped",
            "positions[b] % page_size used as the logical page and positions[b] // page_size "
            "as the slot",
            [[(entry(b, p % size), p // size)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "page-slot-swapped",
            "the page multiplied by the cache's slot stride and the slot by its page stride",
            [[place] for place in own],
            (slot_stride, page_stride, head_stride),
            None,
        ),
        (
            "write-past-page",
            "the slot not reduced modulo page_size: positions[b] used as the slot of page "
            "page_table[b, positions[b] // page_size], which runs past the end of that page",
            [[(entry(b, p // size), p)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "write-past-page",
            "positions[b] used as a slot of the sequence's first page, page_table[b, 0], as if "
            "its pages followed one another in memory",
            [[(entry(b, 0), p)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "write-past-page",
            "each token written positions[b] // page_size physical pages past the page the "
            "table gives (page_table[b, positions[b] // page_size] + positions[b] // page_size): "
            "the slot not reduced modulo page_size, counted in slots of page_size",
            [[(_plus(entry(b, p // size), p // size), p % size)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "write-past-page",
            "each token counted from its sequence's first page, page_table[b, 0] * page_size "
            "+ positions[b], as if the sequence's pages followed one another in memory",
            [[(_plus(entry(b, 0), p // size), p % size)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "heads-contiguous",
            f"the cache's offsets computed from its shape as if it were a contiguous "
            f"[num_pages, page_size, H, D] tensor: heads {head_dim}, slots {heads * head_dim} "
            f"and pages {size * heads * head_dim} elements apart",
            [[place] for place in own],
            (size * heads * head_dim, heads * head_dim, head_dim),
            None,
        ),
        (
            "heads-contiguous",
            f"the cache's page and slot strides, but heads assumed {head_dim} elements apart",
            [[place] for place in own],
            (page_stride, slot_stride, head_dim),
            None,
        ),
        (
            "heads-contiguous",
            f"the cache's page stride, but heads {head_dim} and slots {heads * head_dim} "
            "elements apart, as in a contiguous NHD page",
            [[place] for place in own],
            (page_stride, heads * head_dim, head_dim),
            None,
        ),
        (
            "overwrites-other-slots",
            "each token written at positions[b] + 1: the slot after its own (the sequence's "
            "length after the append used as the position)",
            [[at(b, p + 1)] for b, p in enumerate(positions)],
            None,
            None,
        ),
        (
            "overwrites-other-slots",
            "each token written at positions[b] - 1, over the sequence's last token",
            [[at(b, p - 1)] for b, p in enumerate(positions)] if min(positions) > 0 else [],
            None,
            None,
        ),
        (
            "overwrites-other-slots",
            "token b written at position b (its row in the batch), not at positions[b]",
            [[at(b, b)] for b in range(spec.batch)],
            None,
            None,
        ),
        (
            "overwrites-other-slots",
            "each token written into every slot of its page, over its sequence's earlier "
            "tokens and the free slots after it",
            [[(page, s) for s in range(size)] for page, _slot in own],
            None,
            None,
        ),
        (
            "overwrites-other-slots",
            "each token written into its own slot and every slot before it in its page",
            [[(page, s) for s in range(slot + 1)] for page, slot in own],
            None,
            None,
        ),
        (
            "overwrites-other-slots",
            "each token written into its own slot and every slot after it in its page",
            [[(page, s) for s in range(slot, size)] for page, slot in own],
            None,
            None,
        ),
        (
            "overwrites-other-slots",
            "each token written at its own slot and again at the next one",
            [[own[b], at(b, p + 1)] for b, p in enumerate(positions)],
            None,
            None,
        ),
    ]
    for count in range(1, spec.batch):
        cases.append(
            (
                dx.GRID_TOO_SMALL,
                f"only the first {count} tokens written: the grid has too few programs for B",
                [[place] if b < count else [] for b, place in enumerate(own)],
                None,
                None,
            )
        )
    for count in range(1, heads):
        cases.append(
            (
                dx.GRID_TOO_SMALL,
                f"only heads 0 to {count - 1} of each token written: the grid has too few "
                "head blocks",
                [[place] for place in own],
                None,
                count,
            )
        )
    right = replayed(batch, cache, [[place] for place in own])
    found = []
    for diagnosis, story, places, strides, head_count in cases:
        result = replayed(batch, cache, places, strides, head_count) if places else None
        # A mistake that changes nothing at these inputs (a contiguous table read with rows
        # max_pages apart, NHD strides in an NHD cache) is no suspect here.
        if result is not None and not torch.equal(result[which], right[which]):
            found.append(Suspect(diagnosis, result[which], story))
    return found


# ----------------------------------------------------------------------------------------------
# Calling the function and checking what it wrote
# ----------------------------------------------------------------------------------------------


def append(impl: Learner, batch: Batch, cache: Cache) -> None:
    impl.append_paged_kv_cache(
        batch.k, batch.v, cache.k, cache.v, batch.page_table, batch.positions
    )


def _flat(view: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
    """The memory offsets (in the view's buffer) of the True positions of `where`."""
    index = where.nonzero().cpu()
    return view.storage_offset() + index @ torch.tensor(view.stride())


def _block(n: int) -> int:
    """triton.next_power_of_2(n), the block a kernel covers n lanes or heads with."""
    return 1 << (n - 1).bit_length()


def _stray_lanes(batch: Batch, cache: Cache, wants: tuple[torch.Tensor, torch.Tensor]) -> bool:
    """Whether every wrong value of the caches lies where the padded lanes and head rows of a
    token's tile (a [next_power_of_2(H), next_power_of_2(D)] tile at the token's slot) land,
    and some lie outside the B slots the append writes: the stores lack their mask.

    In NHD, lanes D and up of head h land on head h + 1 (the same token's, rewritten by the
    same store in an order the GPU does not fix) and those of the last head on the next slot;
    in HND they land on the next slot of the same head. Only where they land is compared, not
    what they write: a masked load without `other` leaves those lanes undefined on the GPU.
    """
    spec = batch.spec
    size = spec.page_size
    tile = torch.zeros((_block(spec.heads), _block(spec.head_dim)), dtype=torch.bool)
    real = torch.zeros_like(tile)
    real[: spec.heads, : spec.head_dim] = True
    touched: dict[int, list[torch.Tensor]] = {}
    written: dict[int, list[torch.Tensor]] = {}
    wrong: dict[int, list[torch.Tensor]] = {}
    for view, want, buffer in (
        (cache.k, wants[0], cache.k_buffer),
        (cache.v, wants[1], cache.v_buffer),
    ):
        page_stride, slot_stride, head_stride, _ = view.stride()
        heads = torch.arange(tile.shape[0])[:, None] * head_stride
        lanes = heads + torch.arange(tile.shape[1])[None, :]
        for b, position in enumerate(spec.positions):
            page = int(batch.page_table[b, position // size])
            at = (
                view.storage_offset() + page * page_stride + (position % size) * slot_stride + lanes
            )
            touched.setdefault(id(buffer), []).append(at.reshape(-1))
            written.setdefault(id(buffer), []).append(at[real])
        wrong.setdefault(id(buffer), []).append(_flat(view, view != want))
    strays = False
    for key, parts in wrong.items():
        bad = torch.cat(parts)
        if not bool(torch.isin(bad, torch.cat(touched[key])).all()):
            return False
        strays = strays or not bool(torch.isin(bad, torch.cat(written[key])).all())
    return strays


def check_caches(batch: Batch, cache: Cache, guards: torch.Tensor) -> None:
    """Both caches exact, nothing written around them, the inputs unchanged."""
    wants = expected(batch, cache)
    for which, (name, got, want, before) in enumerate(
        (
            ("k_cache", cache.k, wants[0], cache.k_before),
            ("v_cache", cache.v, wants[1], cache.v_before),
        )
    ):
        try:
            expect_close(
                got,
                want,
                what=name,
                tol=EXACT,
                suspects=lambda which=which: suspects(batch, cache, which),
                untouched=before,
                reads_guarded=True,
            )
        except DrillFailure as failure:
            if failure.diagnosis != dx.MISMATCH or not _stray_lanes(batch, cache, wants):
                raise
            raise failure.renamed(
                dx.MISSING_MASK,
                f"Every wrong value lies where the padded lanes of a token's heads land (lanes "
                f"{batch.spec.head_dim} to {_block(batch.spec.head_dim) - 1} of each head), and "
                "some are outside the slots the append writes: "
                "the stores into the caches need the mask, heads < H and lanes < D.",
            ) from None
    expect_unchanged(cache.guards(), guards, what="the caches")


def inputs_kept(batch: Batch) -> Callable[[], None]:
    """A check, for after the call, that k, v (and the memory around them), page_table and
    positions are as they were."""
    buffers = [b.clone() for b in batch.input_buffers]
    table, positions = batch.table_memory.clone(), batch.positions.clone()

    def check() -> None:
        for buffer, before in zip(batch.input_buffers, buffers, strict=True):
            expect_unchanged(buffer, before, what="k and v")
        if not (torch.equal(batch.table_memory, table) and torch.equal(batch.positions, positions)):
            raise DrillFailure(
                dx.MISMATCH,
                "page_table or positions changed: the function may only write the caches",
            )

    return check


def right_on_nhd(impl: Learner, backend: Backend, spec: Spec, dtype: torch.dtype) -> bool:
    """The same values into separate NHD caches with contiguous k, v and table: all right?

    When this holds and the same values laid out otherwise come out wrong, the layout is what
    the learner's code mishandles.
    """
    batch = make_batch(spec, dtype, backend.device)
    cache = make_cache(batch, "NHD")
    guards = cache.guards()
    append(impl, batch, cache)
    k_want, v_want = expected(batch, cache)
    return (
        torch.equal(cache.k, k_want)
        and torch.equal(cache.v, v_want)
        and torch.equal(cache.guards().isnan(), guards.isnan())
    )


def _layout_failure(failure: DrillFailure, cache: Cache, layout_words: str) -> DrillFailure:
    """A failure on a layout other than plain NHD, by a kernel right on plain NHD: renamed
    after what it mishandles (a cache left as it was: the writes went to a copy)."""
    if failure.diagnosis in ("heads-contiguous", "view-not-reshape"):
        return failure
    if torch.equal(cache.k, cache.k_before) and torch.equal(cache.v, cache.v_before):
        return failure.renamed(
            "view-not-reshape",
            f"The caches kept their old values on {layout_words}, though the same values came "
            "out right in contiguous NHD caches: the kernel wrote into a copy of them "
            "(.contiguous() or .reshape() of a cache that is not contiguous makes one).",
        )
    return failure.renamed(
        "heads-contiguous",
        f"The caches are wrong on {layout_words}, though the same values came out right in "
        "contiguous NHD caches: the kernel computes where a page, slot or head starts from the "
        "shape instead of k_cache.stride().",
    )


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_append_nhd(impl, backend, dtype):
    """Five sequences into separate NHD caches: ragged positions on both sides of page
    boundaries, pages shuffled, free slots holding a canary."""
    batch = make_batch(SMALL, DTYPES[dtype], backend.device)
    cache = make_cache(batch, "NHD")
    guards, kept = cache.guards(), inputs_kept(batch)

    append(impl, batch, cache)

    check_caches(batch, cache, guards)
    kept()


def test_append_position_zero(impl, backend):
    """Six sequences, page_size 5, one of them empty (position 0), int32 positions, fp16."""
    batch = make_batch(WIDE, torch.float16, backend.device, positions_dtype=torch.int32)
    cache = make_cache(batch, "NHD")
    guards, kept = cache.guards(), inputs_kept(batch)

    append(impl, batch, cache)

    check_caches(batch, cache, guards)
    kept()


@pytest.mark.parametrize("layout", ["HND", "NHD pairs", "HND pairs"])
def test_append_layouts(impl, backend, layout):
    """HND caches (each page head-major: heads page_size * D apart, slots D apart) and
    FlashInfer's paired [num_pages, 2, ...] caches (pages twice as far apart).

    The same values go first into separate NHD caches: right there and wrong here means the
    kernel assumes where pages, slots and heads lie instead of using the cache's strides.
    """
    works_nhd = right_on_nhd(impl, backend, SMALL, torch.bfloat16)
    batch = make_batch(SMALL, torch.bfloat16, backend.device)
    cache = make_cache(batch, layout)
    guards, kept = cache.guards(), inputs_kept(batch)

    append(impl, batch, cache)

    strides = tuple(cache.k.stride())
    try:
        check_caches(batch, cache, guards)
    except DrillFailure as failure:
        if not works_nhd:
            raise
        raise _layout_failure(failure, cache, f"{layout} caches (strides {strides})") from None
    kept()


def test_append_qkv_slices(impl, backend):
    """k and v are slices of a fused qkv projection: tokens (4 + 2H) * D elements apart.

    The same values in contiguous k and v come first: right there and wrong here means the
    kernel assumes where k's and v's tokens and heads lie instead of using their strides.
    """
    works_contiguous = right_on_nhd(impl, backend, SMALL, torch.bfloat16)
    batch = make_batch(SMALL, torch.bfloat16, backend.device, qkv=True)
    cache = make_cache(batch, "NHD")
    guards, kept = cache.guards(), inputs_kept(batch)

    append(impl, batch, cache)

    try:
        check_caches(batch, cache, guards)
    except DrillFailure as failure:
        if not works_contiguous or failure.diagnosis == dx.ROW_STRIDE:
            raise
        raise failure.renamed(
            dx.ROW_STRIDE,
            f"The caches are wrong when k and v are slices of a fused qkv tensor (tokens "
            f"{batch.k.stride(0)} and heads {batch.k.stride(1)} elements apart), though the same "
            f"values in contiguous k and v (tokens {SMALL.heads * SMALL.head_dim} apart) came "
            "out right: pass k.stride(0), k.stride(1), v.stride(0) and v.stride(1) to the kernel.",
        ) from None
    kept()


def test_append_table_slice(impl, backend):
    """page_table is the first max_pages columns of a wider block table (rows 3 entries
    longer in memory), as engines that size the table for the longest sequence keep it.

    The same values with a contiguous table come first: right there and wrong here means the
    kernel steps the table's rows by max_pages instead of page_table.stride(0).
    """
    works_contiguous = right_on_nhd(impl, backend, SMALL, torch.bfloat16)
    batch = make_batch(SMALL, torch.bfloat16, backend.device, table_slack=3)
    cache = make_cache(batch, "NHD")
    guards, kept = cache.guards(), inputs_kept(batch)

    append(impl, batch, cache)

    try:
        check_caches(batch, cache, guards)
    except DrillFailure as failure:
        if not works_contiguous or failure.diagnosis == "wrong-sequence-table":
            raise
        raise failure.renamed(
            "wrong-sequence-table",
            f"The caches are wrong when page_table's rows are {batch.page_table.stride(0)} "
            f"entries apart in memory, though the same table stored contiguously (rows "
            f"{SMALL.max_pages} apart) came out right: token b's pages start at "
            "b * page_table.stride(0).",
        ) from None
    kept()
