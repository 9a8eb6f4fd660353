"""What `tutor bench f2` needs besides the kernels: inputs, bytes moved, torch eager.

Each sequence owns MAX_PAGES pages, handed out in a shuffled order, and its new token lands
anywhere in them; k and v are slices of a fused qkv projection (Llama-3-8B's: 32 query heads
over 8 KV heads), as a decode step produces them. The caches are large (MAX_PAGES * B pages)
and only B of their slots are written per call: the bytes that count are the tokens'.
"""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

MAX_PAGES = 2  # pages per sequence: positions fall anywhere in the first two
Q_HEADS = 32  # query heads beside the KV heads in the fused projection k and v are cut from
POSITION_ITEMSIZE = 8  # int64
TABLE_ITEMSIZE = 4  # int32: one entry of page_table read per token


def append_paged_kv_cache_eager(
    k: torch.Tensor,
    v: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    positions: torch.Tensor,
) -> None:
    page_size = k_cache.shape[1]
    rows = torch.arange(k.shape[0], device=k.device)
    pages = page_table[rows, positions // page_size].long()
    slots = positions % page_size
    k_cache[pages, slots] = k
    v_cache[pages, slots] = v


def _append_inputs(s, dtype, device, gen):
    batch, heads, head_dim, page_size = s["b"], s["h"], s["d"], s["page"]
    qkv = normal((batch, Q_HEADS + 2 * heads, head_dim), dtype, device, gen)
    k, v = qkv[:, Q_HEADS : Q_HEADS + heads], qkv[:, Q_HEADS + heads :]
    num_pages = MAX_PAGES * batch
    if s["hnd"]:  # head-major pages: the same logical shape as a view
        k_cache = torch.zeros(num_pages, heads, page_size, head_dim, dtype=dtype, device=device)
        v_cache = torch.zeros_like(k_cache)
        k_cache, v_cache = k_cache.transpose(1, 2), v_cache.transpose(1, 2)
    else:
        k_cache = torch.zeros(num_pages, page_size, heads, head_dim, dtype=dtype, device=device)
        v_cache = torch.zeros_like(k_cache)
    order = torch.randperm(num_pages, device=device, generator=gen)
    page_table = order.view(batch, MAX_PAGES).to(torch.int32)
    positions = torch.randint(
        0, MAX_PAGES * page_size, (batch,), device=device, generator=gen, dtype=torch.int64
    )
    return k, v, k_cache, v_cache, page_table, positions


RECIPES = [
    Recipe(
        function="append_paged_kv_cache",
        dims=("b", "h", "d", "page", "hnd"),
        make=_append_inputs,
        # k and v read and the same bytes written into the caches; one position and one table
        # entry per token. The rest of the caches is never touched.
        nbytes=lambda s, b: (
            4 * s["b"] * s["h"] * s["d"] * b + s["b"] * (POSITION_ITEMSIZE + TABLE_ITEMSIZE)
        ),
        eager=append_paged_kv_cache_eager,
        in_place=(2, 3),
        rows_key="b",
        target=80,  # issue 58: 80% of copy bandwidth for the bytes the op moves
    ),
]
