"""Tests for drill m4: `paged_decode_attention(q, k_cache, v_cache, page_table, seq_lens,
sm_scale)`, decode attention over a paged KV cache with the keys split across programs.

The reference is softmax(q k^T * sm_scale) v in float64, over each sequence's first seq_len
tokens gathered through its page table, from exactly the values the kernel loads. The inputs
make every named mistake move the output far from it:
- the physical pages are shuffled: logical page p + 1 of a sequence is almost never physical
  page + 1, so a kernel that looks a page up once and steps through memory from there reads
  other sequences' pages (the cache holds spare pages past every table's, so those reads stay
  inside it and can be computed);
- seq_lens are not multiples of page_size, and every slot past a sequence's end (the tail of
  its last page, the spare pages its table row lists) holds stale keys with scores about three
  times larger than the real ones: one of them, let in, outweighs the real keys;
- keys and values differ from split to split, with scores spread over several units (random,
  rising along the sequence, or all about -3), so the splits' log-sum-exps differ: a plain
  average or sum of the partial outputs, or weights taken in the wrong base, are far off;
- G > 1 query heads per KV head with H_kv > 1 (H_kv = 3, G = 2 first): h % H_kv and h // H_kv
  both pick other KV heads than h // G;
- every cache sits inside NaN guards, so a load past the cache turns rows NaN (missing-mask).

The tests cannot see how the learner splits the keys: the suspects that depend on it (a merge
without weights or in the wrong base, keys read up to the end of a tile or split, a page looked
up once per tile or split) are computed for every split or tile length that is a multiple of
the page size (or of 16, for larger pages), and for each sequence cut into 2-8 equal splits.

16-bit inputs: bfloat16 on the GPU. The CPU interpreter's tl.dot multiplies bfloat16 tensors as
their raw 16-bit integers, so on the CPU the 16-bit tests use float16 (as m3's do).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

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

DRILL = "m4"

LOG2E = 1.4426950408889634
LN2 = math.log(2.0)
SPARE_TOKENS = 64  # table capacity past the longest sequence: a tile or split read to its end
STALE_SCALE = 3.0  # stale keys (past seq_len) are this many times larger than real ones

# fp32 on the CPU: tl.dot is an fp32 numpy matmul, exp2 and log2 are exact to an ulp; the kernel
# differs from the fp64 reference by ~2e-6 at most on these inputs (outputs are at most ~3).
CPU_FP32 = Tolerance(atol=2e-5, rtol=2e-5)
# fp32 on the GPU: tl.dot rounds fp32 inputs to TF32 (10 mantissa bits, ~5e-4 relative) in both
# q k^T and p v. Scores of up to ~8 carry ~4e-3 absolute error into the exponent, and a split's
# lse as much: outputs move by a few 1e-3. Every suspect below moves some output by 5e-2 or more.
GPU_FP32 = Tolerance(atol=5e-3, rtol=5e-3)
# 16-bit: p is rounded to the input dtype before p @ v (bf16 on the GPU: 2**-9 relative each;
# fp16 on the CPU: 2**-11), and the output is rounded to the dtype, where the kernel's fp32 value
# and the reference's can sit on two sides of a rounding boundary: one ulp is at most 2**-7
# relative in bf16.
HALF = Tolerance(atol=4e-3, rtol=2**-7)


def fp32_tol(backend: Backend) -> Tolerance:
    return CPU_FP32 if backend.is_cpu else GPU_FP32


def half_dtype(backend: Backend) -> torch.dtype:
    """bfloat16 on the GPU, float16 on the CPU (see the module docstring)."""
    return torch.float16 if backend.is_cpu else torch.bfloat16


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One call's arguments, as the kernel sees them."""

    q: torch.Tensor  # [B, H_q, D]
    k_cache: torch.Tensor  # [num_pages, page_size, H_kv, D]
    v_cache: torch.Tensor
    page_table: torch.Tensor  # [B, max_pages] int32
    seq_lens: torch.Tensor  # [B] int32
    sm_scale: float

    @property
    def page_size(self) -> int:
        return self.k_cache.shape[1]

    @property
    def group(self) -> int:
        return self.q.shape[1] // self.k_cache.shape[2]

    @property
    def capacity(self) -> int:
        """Tokens the page table can address per sequence: max_pages * page_size."""
        return self.page_table.shape[1] * self.page_size

    def args(self) -> tuple:
        return (self.q, self.k_cache, self.v_cache, self.page_table, self.seq_lens, self.sm_scale)

    def label(self) -> str:
        batch, n_heads, head_dim = self.q.shape
        dtype = str(self.q.dtype).removeprefix("torch.")
        lens = ", ".join(str(int(n)) for n in self.seq_lens.cpu())
        return (
            f"output for {dtype} q [{batch}, {n_heads}, {head_dim}] over {self.k_cache.shape[2]} "
            f"KV heads, pages of {self.page_size}, seq_lens [{lens}]"
        )


@dataclass(frozen=True)
class History:
    """What the cache holds, before it is paged: one row of tokens per sequence."""

    q: torch.Tensor  # [B, H_q, D]
    k: torch.Tensor  # [B, capacity, H_kv, D]: the sequence's tokens, then stale ones
    v: torch.Tensor
    spare_k: torch.Tensor  # [max_pages * page_size, H_kv, D]: pages no table lists
    spare_v: torch.Tensor
    seq_lens: tuple[int, ...]
    page_size: int
    sm_scale: float


def history(
    seq_lens: tuple[int, ...],
    *,
    n_kv: int,
    group: int,
    head_dim: int,
    page_size: int,
    seed: int,
    kind: str = "random",
    q_std: float = 2.0,
    sm_scale: float | None = None,
) -> History:
    """Keys, values and queries whose scores (at sm_scale, 1/sqrt(D) by default) are:

    - "random": normal with a spread of about q_std;
    - "growing": rising from ~0 to ~8 along the table's capacity (noise +-0.5), so the later
      splits of a sequence carry most of the weight;
    - "negative": all about -3 (noise +-0.5), so a key of score 0 outweighs twenty real ones.

    Tokens past seq_len are stale: STALE_SCALE times larger random keys, random values.
    """
    gen = torch.Generator().manual_seed(seed)
    batch, n_heads = len(seq_lens), n_kv * group
    max_pages = -(-(max(seq_lens) + SPARE_TOKENS) // page_size)
    capacity = max_pages * page_size
    d = head_dim
    u = torch.ones(d) / math.sqrt(d)
    noise = 0.3
    if kind == "random":
        q = q_std * torch.randn(batch, n_heads, d, generator=gen)
        k = torch.randn(batch, capacity, n_kv, d, generator=gen)
    elif kind == "growing":
        ramp = torch.linspace(0.0, 1.0, capacity)[None, :, None, None]
        q = math.sqrt(d) * u + noise * torch.randn(batch, n_heads, d, generator=gen)
        k = 8.0 * ramp * u + noise * torch.randn(batch, capacity, n_kv, d, generator=gen)
    elif kind == "negative":
        q = math.sqrt(d) * u + noise * torch.randn(batch, n_heads, d, generator=gen)
        k = -3.0 * u + noise * torch.randn(batch, capacity, n_kv, d, generator=gen)
    else:
        raise ValueError(kind)
    v = torch.randn(batch, capacity, n_kv, d, generator=gen)
    stale = torch.arange(capacity)[None, :] >= torch.tensor(seq_lens)[:, None]
    stale_k = STALE_SCALE * torch.randn(batch, capacity, n_kv, d, generator=gen)
    k = torch.where(stale[:, :, None, None], stale_k, k)
    return History(
        q=q,
        k=k,
        v=v,
        spare_k=STALE_SCALE * torch.randn(capacity, n_kv, d, generator=gen),
        spare_v=torch.randn(capacity, n_kv, d, generator=gen),
        seq_lens=tuple(seq_lens),
        page_size=page_size,
        sm_scale=sm_scale if sm_scale is not None else 1.0 / math.sqrt(d),
    )


def paged(
    h: History,
    dtype: torch.dtype,
    backend: Backend,
    *,
    shuffled: bool = True,
    seed: int = 0,
    head_major: bool = False,
) -> Case:
    """The history in a paged cache: sequence b's logical page p at physical page
    page_table[b, p], a random permutation of the first B * max_pages pages (or, unshuffled,
    page b * max_pages + p). The last max_pages pages are spare: no table lists them, but a
    kernel that steps from a page it looked up to the next in memory may reach them.

    head_major: the caches are [num_pages, H_kv, page_size, D] in memory, passed as the
    [num_pages, page_size, H_kv, D] view.
    """
    batch, capacity, n_kv, d = h.k.shape
    ps = h.page_size
    max_pages = capacity // ps
    in_tables = batch * max_pages
    order = (
        torch.randperm(in_tables, generator=torch.Generator().manual_seed(1000 + seed))
        if shuffled
        else torch.arange(in_tables)
    )
    table = order.view(batch, max_pages)
    pages_k = torch.empty(in_tables + max_pages, ps, n_kv, d)
    pages_v = torch.empty_like(pages_k)
    pages_k[table.flatten()] = h.k.reshape(in_tables, ps, n_kv, d)
    pages_v[table.flatten()] = h.v.reshape(in_tables, ps, n_kv, d)
    pages_k[in_tables:] = h.spare_k.reshape(max_pages, ps, n_kv, d)
    pages_v[in_tables:] = h.spare_v.reshape(max_pages, ps, n_kv, d)

    def cache(pages: torch.Tensor) -> torch.Tensor:
        pages = pages.to(dtype)
        if head_major:
            return guarded(pages.transpose(1, 2).contiguous().to(backend.device))[0].transpose(1, 2)
        return guarded(pages.to(backend.device))[0]

    return Case(
        q=guarded(h.q.to(device=backend.device, dtype=dtype))[0],
        k_cache=cache(pages_k),
        v_cache=cache(pages_v),
        page_table=table.to(device=backend.device, dtype=torch.int32),
        seq_lens=torch.tensor(h.seq_lens, dtype=torch.int32, device=backend.device),
        sm_scale=h.sm_scale,
    )


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake computes instead
# ----------------------------------------------------------------------------------------------


def storage_of(t: torch.Tensor) -> torch.Tensor:
    """The whole memory `t` is a view of (its NaN guards included), as a 1-D tensor."""
    storage = t.untyped_storage()
    flat = torch.empty(0, dtype=t.dtype, device=t.device)
    return flat.set_(storage, 0, (storage.nbytes() // t.element_size(),), (1,))


def read_rows(cache: torch.Tensor, page, slot, head) -> torch.Tensor:
    """cache[page, slot, head, :] in fp64 for broadcast index tensors, computed from the
    cache's strides as a kernel's pointers are, so that a head index past H_kv or a page past
    the ones a table lists reads what the kernel would (NaN past the memory's ends)."""
    flat = storage_of(cache)
    offset = cache.storage_offset() + page * cache.stride(0) + slot * cache.stride(1)
    offset = offset + head * cache.stride(2)
    index = offset[..., None] + torch.arange(cache.shape[3], device=cache.device)
    inside = (index >= 0) & (index < flat.numel())
    values = flat[index.clamp(0, flat.numel() - 1)].double()
    return torch.where(inside, values, float("nan"))


def gathered(
    case: Case,
    lookup_every: int | None = None,
    kv_of: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """k and v as fp64 [B, H_q, capacity, D]: token t of sequence b for query head h, read as
    a kernel reads it.

    lookup_every=L: the page is looked up in the table only at tokens that are multiples of L
    (a tile's or a split's first), and the next logical pages are taken to be the next physical
    ones. kv_of: the KV head each query head reads (h // G when None).
    """
    ps, capacity = case.page_size, case.capacity
    device = case.q.device
    t = torch.arange(capacity, device=device)
    logical = t // ps
    table = case.page_table.long()
    if lookup_every is None:
        physical = table[:, logical]
    else:
        first = (t // lookup_every) * lookup_every // ps  # the page looked up for token t
        physical = table[:, first] + (logical - first)[None, :]
    heads = torch.arange(case.q.shape[1], device=device)
    kv = heads // case.group if kv_of is None else kv_of(heads)
    index = (physical[:, None, :], (t % ps)[None, None, :], kv[None, :, None])
    return read_rows(case.k_cache, *index), read_rows(case.v_cache, *index)


def scores_of(case: Case, k: torch.Tensor) -> torch.Tensor:
    """q k^T * sm_scale in fp64: [B, H_q, capacity]."""
    return torch.einsum("bhd,bhtd->bht", case.q.double(), k) * case.sm_scale


def visible(case: Case, lengths: torch.Tensor | None = None) -> torch.Tensor:
    """[B, 1, capacity] bool: token t < the sequence's length (seq_lens by default)."""
    lengths = case.seq_lens if lengths is None else lengths
    t = torch.arange(case.capacity, device=case.q.device)
    return (t[None, :] < lengths.long()[:, None])[:, None, :]


def attend(s: torch.Tensor, v: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """softmax over the kept tokens of s, times v: [B, H_q, D] in fp64."""
    p = torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)
    return torch.einsum("bht,bhtd->bhd", p, v)


def reference(case: Case) -> torch.Tensor:
    k, v = gathered(case)
    return attend(scores_of(case, k), v, visible(case))


@dataclass(frozen=True)
class Splits:
    """Each split's max score m (natural units), sum l = sum exp(s - m) and output o."""

    m: torch.Tensor  # [B, H_q, S]
    l: torch.Tensor  # noqa: E741 - the lesson's name
    o: torch.Tensor  # [B, H_q, S, D]
    has: torch.Tensor  # [B, H_q, S] bool: the split has keys
    grid: int  # splits a grid over the table's capacity launches


def split_stats(s: torch.Tensor, v: torch.Tensor, keep: torch.Tensor, split_of) -> Splits:
    """The partial results of splits: token t of sequence b belongs to split split_of[b, t]."""
    n_splits = int(split_of.max()) + 1
    ids = torch.arange(n_splits, device=s.device)
    member = (split_of[:, None, :] == ids[None, :, None])[:, None] & keep[:, :, None, :]
    scores = torch.where(member, s[:, :, None, :], float("-inf"))  # [B, H, S, T]
    m = scores.amax(dim=-1)
    has = member.any(dim=-1).expand_as(m)
    e = torch.exp(scores - torch.where(has, m, 0.0)[..., None])
    total = e.sum(dim=-1)
    o = torch.einsum("bhst,bhtd->bhsd", e, v) / torch.where(has, total, 1.0)[..., None]
    return Splits(m, total, o, has, n_splits)


def merged(sp: Splits, log_weight: torch.Tensor | None, *, divide: bool = True) -> torch.Tensor:
    """sum over the splits with keys of w * o, divided by sum w when `divide`; w =
    exp(log_weight - its max) (log_weight None: every split weighs 1)."""
    if log_weight is None:
        w = sp.has.double()
    else:
        lw = torch.where(sp.has, log_weight, float("-inf"))
        w = torch.exp(lw - lw.amax(dim=-1, keepdim=True))
    total = (w[..., None] * sp.o.nan_to_num()).sum(dim=-2)
    return total / w.sum(dim=-1, keepdim=True) if divide else total


# The lse a kernel stores and the exponential its merge takes, as log-weights in natural units:
# stored x and a merge by exp2 give 2^x = e^(x ln 2). Base 2 is m * log2(e) + log2(l).
LSE_MISTAKES = [
    (lambda m, ln_l: LN2 * (m + ln_l), "a natural-log lse merged with exp2"),
    (
        lambda m, ln_l: LOG2E * (m + ln_l),
        "a base-2 lse (m and log2(l) in log2 units) merged with exp",
    ),
    (
        lambda m, ln_l: m * LOG2E + ln_l,
        "an lse of the max in log2 units plus the natural log of l, merged with exp",
    ),
    (
        lambda m, ln_l: m + LN2 * ln_l,
        "an lse of the max in log2 units plus the natural log of l, merged with exp2",
    ),
    (
        lambda m, ln_l: m + LOG2E * ln_l,
        "an lse of the max in natural units plus log2(l), merged with exp",
    ),
    (
        lambda m, ln_l: LN2 * m + ln_l,
        "an lse of the max in natural units plus log2(l), merged with exp2",
    ),
]


def split_families(case: Case) -> list[tuple[torch.Tensor, str]]:
    """(split_of [B, capacity], its story) for every split a kernel is likely to use: splits
    of L tokens for every multiple L of the page size (of 16 for pages over 16) shorter than the
    table's capacity, and each sequence cut into 2 to 8 equal splits (of whole pages, too)."""
    step = min(case.page_size, 16)
    t = torch.arange(case.capacity, device=case.q.device)
    found = [
        (t[None, :].expand(case.q.shape[0], -1) // size, f"splits of {size} keys")
        for size in range(step, case.capacity, step)
    ]
    lens = case.seq_lens.long()
    for parts in range(2, 9):
        size = -(-lens // parts)
        found.append((t[None, :] // size[:, None], f"each sequence cut into {parts} equal splits"))
        pages = -(-size // case.page_size) * case.page_size
        found.append(
            (
                t[None, :] // pages[:, None],
                f"each sequence cut into {parts} splits of whole pages",
            )
        )
    return found


def far_apart(a: torch.Tensor, b: torch.Tensor, tol: Tolerance, factor: float = 8.0) -> bool:
    """Some element of a differs from b by more than `factor` tolerances (NaN counts as far)."""
    allowed = tol.atol + tol.rtol * b.abs()
    return bool(((a - b).abs() > factor * allowed).any() | (a.isnan() != b.isnan()).any())


def suspects(case: Case, want: torch.Tensor, backend: Backend, tol: Tolerance) -> list[Suspect]:
    """What each declared mistake gives on this case, rounded as the kernel's output is; a
    suspect these inputs cannot tell from the reference is left out."""
    dtype = case.q.dtype
    found: list[Suspect] = []

    def made(diagnosis: str, value: torch.Tensor, story: str) -> None:
        value = round_to(value.float(), dtype, backend)
        if far_apart(value.float(), want.float(), tol):
            found.append(Suspect(diagnosis, value, story))

    k, v = gathered(case)
    s = scores_of(case, k)
    keep = visible(case)
    n_kv = case.k_cache.shape[2]
    step = min(case.page_size, 16)
    lens = case.seq_lens.long()

    # keys past seq_len: read up to the end of the page, of a tile or split, or of the table
    ends = [(case.page_size, f"the end of its last page ({case.page_size} slots)")]
    ends += [(size, f"a multiple of {size} keys") for size in range(step, case.capacity, step)]
    ends.append((case.capacity, "the end of its page table row"))
    for size, where in ends:
        longer = torch.clamp(-(-lens // size) * size, max=case.capacity)
        stale = visible(case, longer)
        made(
            "keys-past-len",
            attend(s, v, stale),
            f"attention over each sequence's keys up to {where}: the stale slots past "
            "seq_len were not masked",
        )
        past = stale & ~keep
        made(
            "keys-past-len",
            attend(s.masked_fill(past, 0.0), v.masked_fill(past[..., None], 0.0), stale),
            f"attention over each sequence's keys plus zero keys up to {where}: keys past "
            "seq_len loaded as 0 (score 0, value 0) but not masked to -inf",
        )

    # the splits merged without their weights, or with weights in the wrong base
    for split_of, split_story in split_families(case):
        sp = split_stats(s, v, keep, split_of)
        made(
            "splits-unweighted",
            merged(sp, None),
            f"the plain average of the partial outputs of {split_story}",
        )
        made(
            "splits-unweighted",
            merged(sp, None, divide=False),
            f"the sum of the partial outputs of {split_story}",
        )
        made(
            "splits-unweighted",
            merged(sp, None, divide=False) / sp.grid,
            f"the partial outputs of {split_story} summed and divided by the {sp.grid} "
            "splits of the grid",
        )
        ln_l = torch.log(torch.where(sp.has, sp.l, 1.0))
        for log_weight, lse_story in LSE_MISTAKES:
            made(
                "lse-base",
                merged(sp, log_weight(sp.m, ln_l)),
                f"the partial outputs of {split_story} weighted by {lse_story}",
            )

    # the wrong KV head for a query head
    for kv_of, rule in (
        (lambda h: h % n_kv, "h % H_kv"),
        (lambda h: h // n_kv, "h // H_kv"),  # past the last KV head when G > H_kv
    ):
        k_wrong, v_wrong = gathered(case, kv_of=kv_of)
        made(
            "kv-head",
            attend(scores_of(case, k_wrong), v_wrong, keep),
            f"attention where query head h reads KV head {rule} instead of h // G "
            f"(G = {case.group})",
        )

    # a page looked up once, the next logical pages taken from the next physical ones
    lookups = [(size, f"every {size} keys") for size in range(step, case.capacity, step)]
    lookups.append((case.capacity, "once per sequence"))
    for size, how in lookups:
        if size <= case.page_size:
            continue  # a lookup at every page: right
        k_next, v_next = gathered(case, lookup_every=size)
        made(
            "pages-assumed-contiguous",
            attend(scores_of(case, k_next), v_next, keep),
            f"attention over keys whose page was looked up {how} and the pages after it "
            "read from the physical pages that follow it in memory",
        )
    return found


# ----------------------------------------------------------------------------------------------
# The check
# ----------------------------------------------------------------------------------------------


def is_right(out: object, want: torch.Tensor, tol: Tolerance) -> bool:
    if not isinstance(out, torch.Tensor) or out.shape != want.shape or out.dtype != want.dtype:
        return False
    allowed = tol.atol + tol.rtol * want.float().abs()
    return bool(((out.float() - want.float()).abs() <= allowed).all())


def check(impl, backend: Backend, case: Case, tol: Tolerance) -> None:
    out = impl.paged_decode_attention(*case.args())
    want = round_to(reference(case).float(), case.q.dtype, backend)
    expect_close(
        out,
        want,
        what=case.label(),
        tol=tol,
        suspects=lambda: (
            suspects(case, want, backend, tol)
            if isinstance(out, torch.Tensor) and out.shape == want.shape
            else ()
        ),
        reads_guarded=True,
    )


def check_paged(impl, backend: Backend, h: History, dtype: torch.dtype, tol: Tolerance) -> None:
    """check() on the history in shuffled pages; when that fails with no named mistake, the
    same history in pages laid out in order tells whether the page lookups are at fault."""
    case = paged(h, dtype, backend)
    try:
        check(impl, backend, case, tol)
    except DrillFailure as failure:
        if failure.diagnosis not in (dx.MISMATCH, dx.NAN_OR_INF, dx.MISSING_MASK):
            raise
        in_order = paged(h, dtype, backend, shuffled=False)
        want = round_to(reference(in_order).float(), dtype, backend)
        if not is_right(impl.paged_decode_attention(*in_order.args()), want, tol):
            raise
        raise failure.renamed(
            "pages-assumed-contiguous",
            "The same sequences in a cache whose pages lie in order (page_table[b, p] = "
            "b * max_pages + p) give the right output: look up every key's page in page_table "
            "(page_table[b, t // page_size]); logical page p + 1 is anywhere in the cache.",
        ) from None


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


def test_fp32_shuffled_pages_gqa(impl, backend):
    # The first look: two sequences of 37 and 90 tokens in shuffled pages of 8 (both end
    # mid-page), 3 KV heads read by 2 query heads each, scores spread over several units.
    h = history((37, 90), n_kv=3, group=2, head_dim=64, page_size=8, seed=1, sm_scale=0.2)
    check_paged(impl, backend, h, torch.float32, fp32_tol(backend))


def test_fp32_growing_scores(impl, backend):
    # Scores rise from ~0 to ~8 along the sequence: the last split holds most of the softmax's
    # weight, so partial outputs averaged (or weighted in the wrong base) are far off.
    h = history((100, 61), n_kv=2, group=3, head_dim=64, page_size=16, seed=2, kind="growing")
    check_paged(impl, backend, h, torch.float32, fp32_tol(backend))


def test_fp32_negative_scores(impl, backend):
    # Every real score is about -3: a key past seq_len that enters the softmax with score 0
    # (loaded as zeros, not masked to -inf) weighs as much as twenty real ones.
    h = history((45, 29, 70), n_kv=2, group=2, head_dim=64, page_size=8, seed=3, kind="negative")
    check_paged(impl, backend, h, torch.float32, fp32_tol(backend))


def test_fp32_short_sequences(impl, backend):
    # Sequences of 3, 8 and 13 tokens in pages of 8: one split each, the first ends mid-page,
    # the second fills its page exactly. One KV head for 4 query heads (multi-query).
    h = history((3, 8, 13), n_kv=1, group=4, head_dim=64, page_size=8, seed=4, sm_scale=0.3)
    check_paged(impl, backend, h, torch.float32, fp32_tol(backend))


def test_half_d128(impl, backend):
    # 16-bit (bf16 on the GPU, fp16 on the CPU), D = 128, pages of 16, 2 KV heads for 8 query
    # heads (the bench's ratio): the shapes of a real decode step, scaled down.
    h = history((150, 77), n_kv=2, group=4, head_dim=128, page_size=16, seed=5, q_std=1.5)
    check_paged(impl, backend, h, half_dtype(backend), HALF)


def test_half_strided_inputs(impl, backend):
    # The caches stored head-major ([num_pages, H_kv, page_size, D]) and passed as the NHD
    # view, q a slice of a fused [B, 3 * H_q, D] qkv tensor, page_table a slice of a wider
    # table. Right on contiguous copies but wrong here means a stride taken from a shape.
    dtype = half_dtype(backend)
    h = history((53, 40), n_kv=3, group=2, head_dim=64, page_size=16, seed=6, sm_scale=0.15)
    plain = paged(h, dtype, backend)
    strided = paged(h, dtype, backend, head_major=True)
    batch, n_heads, head_dim = plain.q.shape
    gen = torch.Generator().manual_seed(60)
    qkv = torch.randn(batch, 3 * n_heads, head_dim, generator=gen).to(plain.q.device, dtype)
    qkv = guarded(qkv)[0]
    qkv[:, :n_heads] = plain.q
    wide = torch.zeros(batch, plain.page_table.shape[1] + 5, dtype=torch.int32, device=qkv.device)
    wide[:, : plain.page_table.shape[1]] = plain.page_table
    strided = replace(strided, q=qkv[:, :n_heads], page_table=wide[:, : plain.page_table.shape[1]])
    try:
        check(impl, backend, strided, HALF)
    except DrillFailure as failure:
        if failure.diagnosis not in (dx.MISMATCH, dx.NAN_OR_INF, dx.MISSING_MASK):
            raise
        want = round_to(reference(plain).float(), dtype, backend)
        if not is_right(impl.paged_decode_attention(*plain.args()), want, HALF):
            raise
        raise failure.renamed(
            dx.ROW_STRIDE,
            "The same values in contiguous tensors give the right output: pass the strides of "
            "q (dims 0, 1), of k_cache and v_cache (dims 0, 1, 2) and page_table.stride(0) to "
            "the kernel, and index every tensor by its own.",
        ) from None
