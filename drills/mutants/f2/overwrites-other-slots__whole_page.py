"""An f2 mutant: each program stores a [page_size, D] tile of one head's page, meaning to
write only the token's slot, but masks the slots with `slots < page_size` instead of
`slots == slot`: the token is written into every slot of its page.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _page_tile_kernel(
    k_ptr, v_ptr, k_cache_ptr, v_cache_ptr, page_table_ptr, positions_ptr,
    stride_kb, stride_kh, stride_vb, stride_vh, stride_cp, stride_cs, stride_ch, stride_t,
    head_dim, page_size, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1).to(tl.int64)
    slots = tl.arange(0, BLOCK_S)
    cols = tl.arange(0, BLOCK_D)
    pos = tl.load(positions_ptr + b).to(tl.int64)
    page = tl.load(page_table_ptr + b * stride_t + pos // page_size).to(tl.int64)
    k_row = tl.load(k_ptr + b * stride_kb + h * stride_kh + cols, mask=cols < head_dim)
    v_row = tl.load(v_ptr + b * stride_vb + h * stride_vh + cols, mask=cols < head_dim)
    tile = page * stride_cp + slots[:, None] * stride_cs + h * stride_ch + cols[None, :]
    in_page = (slots < page_size)[:, None] & (cols < head_dim)[None, :]
    tl.store(k_cache_ptr + tile, tl.broadcast_to(k_row[None, :], (BLOCK_S, BLOCK_D)), mask=in_page)
    tl.store(v_cache_ptr + tile, tl.broadcast_to(v_row[None, :], (BLOCK_S, BLOCK_D)), mask=in_page)


def append_paged_kv_cache(k, v, k_cache, v_cache, page_table, positions):
    batch, heads, head_dim = k.shape
    page_size = k_cache.shape[1]
    _page_tile_kernel[(batch, heads)](
        k, v, k_cache, v_cache, page_table, positions,
        k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        *k_cache.stride()[:3], page_table.stride(0), head_dim, page_size,
        BLOCK_S=triton.next_power_of_2(page_size), BLOCK_D=triton.next_power_of_2(head_dim),
    )  # fmt: skip
