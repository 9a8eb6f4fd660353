"""An f2 mutant: the wrapper flattens each cache's pages into one axis of slots with
reshape(-1, H, D), so a kernel can address slot page * page_size + slot. For an NHD cache that
is a view; for HND or paired k/v pages reshape copies, and the kernel fills the copy.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _to_slots(k_ptr, v_ptr, kc_ptr, vc_ptr, table_ptr, pos_ptr,
              k_tok, k_head, v_tok, v_head, slot_stride, head_stride, table_row,
              H, D, page_size, BH: tl.constexpr, BD: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    hs = tl.arange(0, BH)[:, None]
    ds = tl.arange(0, BD)[None, :]
    m = (hs < H) & (ds < D)
    p = tl.load(pos_ptr + t).to(tl.int64)
    flat = tl.load(table_ptr + t * table_row + p // page_size).to(tl.int64) * page_size
    flat += p % page_size
    at = flat * slot_stride + hs * head_stride + ds
    tl.store(kc_ptr + at, tl.load(k_ptr + t * k_tok + hs * k_head + ds, mask=m), mask=m)
    tl.store(vc_ptr + at, tl.load(v_ptr + t * v_tok + hs * v_head + ds, mask=m), mask=m)


def append_paged_kv_cache(
    k: torch.Tensor,
    v: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    positions: torch.Tensor,
) -> None:
    B, H, D = k.shape
    page_size = k_cache.shape[1]
    k_slots = k_cache.reshape(-1, H, D)  # [num_pages * page_size, H, D]
    v_slots = v_cache.reshape(-1, H, D)
    _to_slots[(B,)](
        k, v, k_slots, v_slots, page_table, positions,
        k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        k_slots.stride(0), k_slots.stride(1), page_table.stride(0), H, D, page_size,
        BH=triton.next_power_of_2(H), BD=triton.next_power_of_2(D), num_warps=2,
    )  # fmt: skip
