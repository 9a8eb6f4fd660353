"""What `tutor bench m4` needs beside the kernels: inputs, bytes moved, torch eager, a lever.

The inputs are a decode step of a serving batch: every sequence `s` tokens long, its pages of
`page` tokens shuffled through a cache of exactly the pages the batch uses (NHD layout). The
fewest bytes are the KV pages read once, plus q, the output, the page table and seq_lens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from tutor.bench.recipe import Recipe, normal

TABLE_ITEMSIZE = 4  # page_table and seq_lens are int32 whatever the cache's dtype


def paged_decode_eager(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    """The pages gathered into [B, H_kv, max_len, D] with torch indexing, then attention as
    two batched matmuls around a masked softmax, the G query heads of a KV head as the rows
    of one matmul (no copy of k and v per query head)."""
    batch, n_heads, head_dim = q.shape
    _, page_size, n_kv_heads, _ = k_cache.shape
    max_len = page_table.shape[1] * page_size
    k = k_cache[page_table].reshape(batch, max_len, n_kv_heads, head_dim).transpose(1, 2)
    v = v_cache[page_table].reshape(batch, max_len, n_kv_heads, head_dim).transpose(1, 2)
    q_groups = q.view(batch, n_kv_heads, n_heads // n_kv_heads, head_dim)
    scores = torch.matmul(q_groups, k.transpose(-1, -2)).float() * sm_scale  # [B, H_kv, G, S]
    visible = torch.arange(max_len, device=q.device)[None, :] < seq_lens[:, None]
    scores = scores.masked_fill(~visible[:, None, None, :], float("-inf"))
    p = torch.softmax(scores, dim=-1).to(v.dtype)
    return torch.matmul(p, v).reshape(batch, n_heads, head_dim)


def _decode_inputs(s, dtype, device, gen):
    batch, pages_per_seq = s["b"], s["s"] // s["page"]
    n_pages = batch * pages_per_seq
    q = normal((batch, s["h"], s["d"]), dtype, device, gen)
    cache_shape = (n_pages, s["page"], s["h_kv"], s["d"])
    k_cache, v_cache = (
        normal(cache_shape, dtype, device, gen),
        normal(cache_shape, dtype, device, gen),
    )
    order = torch.randperm(n_pages, generator=gen, device=device)
    page_table = order.to(torch.int32).view(batch, pages_per_seq)
    seq_lens = torch.full((batch,), s["s"], dtype=torch.int32, device=device)
    return q, k_cache, v_cache, page_table, seq_lens, 1.0 / math.sqrt(s["d"])


def _decode_bytes(s, itemsize: int) -> int:
    kv = 2 * s["b"] * s["s"] * s["h_kv"] * s["d"] * itemsize  # every page of k and v, once
    q_and_out = 2 * s["b"] * s["h"] * s["d"] * itemsize
    tables = (s["b"] * (s["s"] // s["page"]) + s["b"]) * TABLE_ITEMSIZE
    return kv + q_and_out + tables


@dataclass(frozen=True)
class Finding:
    """A perf diagnosis as the coach reports it (tutor.bench.rules.Finding's fields)."""

    id: str
    text: str
    numbers: dict[str, Any] = field(default_factory=dict)


def keys_without_tiles(case: Any) -> Finding | None:
    """The learner's main kernel multiplies no tile with tl.dot where the reference does: its
    key loop scores keys with elementwise products, a key (one row of a page) or a few per
    step, so each step loads a few hundred bytes and waits for them.

    Checked before the common rules: the same kernel's grid, with the few registers a row loop
    needs, fits twice the programs on an SM and may leave a last wave half full
    (`too-few-programs`), which is not where its time goes."""
    mine = case.mine.main
    base = case.baseline.main if case.baseline is not None else None
    if not mine or not base or mine.get("dot_tiles") != [] or not base.get("dot_tiles"):
        return None
    ratio = case.ratio
    numbers = {
        "us": round(case.mine.time, 1) if case.mine.time else None,
        "ref_us": round(case.baseline.time, 1) if case.baseline.time else None,
        "ratio": round(ratio, 2) if ratio else None,
        "kernel": mine.get("kernel"),
        "ref_tile": "x".join(str(n) for n in base["dot_tiles"][0][:2]),
    }
    return Finding(
        "one-key-per-step",
        "{kernel} has no tl.dot: its key loop scores keys with elementwise products, a key or "
        "a few per step, so each step loads a few hundred bytes and waits for them ({us} µs, "
        "{ratio}x the reference, whose loop multiplies {ref_tile} score tiles with tl.dot)."
        "".format(**numbers),
        numbers,
    )


RECIPES = [
    Recipe(
        function="paged_decode_attention",
        dims=("b", "h", "h_kv", "d", "page", "s"),
        make=_decode_inputs,
        nbytes=_decode_bytes,
        eager=paged_decode_eager,
        target=80,  # % of copy bandwidth over the bytes above (issue 58)
        levers=(keys_without_tiles,),
    ),
]
