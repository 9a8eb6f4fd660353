"""An f2 mutant: every cache offset is computed from the shape, as if the cache were a
contiguous [num_pages, page_size, H, D] tensor: heads D apart, slots H*D, pages S*H*D.
Right for separate NHD caches, wrong for HND and for paired k/v pages.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _write_token(k_ptr, v_ptr, kc_ptr, vc_ptr, table_ptr, pos_ptr, k_stride, v_stride,
                 k_head, v_head, table_stride, H, D, PAGE, HP: tl.constexpr, DP: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    h = tl.arange(0, HP)[:, None]
    d = tl.arange(0, DP)[None, :]
    ok = (h < H) & (d < D)
    pos = tl.load(pos_ptr + i).to(tl.int64)
    phys = tl.load(table_ptr + i * table_stride + pos // PAGE).to(tl.int64)
    flat_slot = phys * PAGE + pos % PAGE
    dst = (flat_slot * H + h) * D + d
    tl.store(kc_ptr + dst, tl.load(k_ptr + i * k_stride + h * k_head + d, mask=ok), mask=ok)
    tl.store(vc_ptr + dst, tl.load(v_ptr + i * v_stride + h * v_head + d, mask=ok), mask=ok)


def append_paged_kv_cache(
    k: torch.Tensor,
    v: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    positions: torch.Tensor,
) -> None:
    n, heads, dim = k.shape
    _write_token[(n,)](
        k, v, k_cache, v_cache, page_table, positions, k.stride(0), v.stride(0), k.stride(1),
        v.stride(1), page_table.stride(0), heads, dim, k_cache.shape[1],
        HP=triton.next_power_of_2(heads), DP=triton.next_power_of_2(dim), num_warps=4,
    )  # fmt: skip
