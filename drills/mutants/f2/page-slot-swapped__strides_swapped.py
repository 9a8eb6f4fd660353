"""An f2 mutant: the kernel takes the slot stride before the page stride, the wrapper passes
them in the cache's order, so the page is multiplied by the slot stride and the slot by the
page stride.
"""

import triton
import triton.language as tl


@triton.jit
def _kv_append(kp, vp, kcp, vcp, tp, pp, skt, skh, svt, svh, s_slot, s_page, s_head, s_row,
               H, D, S, BH: tl.constexpr, BD: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    hh = tl.program_id(1) * BH + tl.arange(0, BH)
    dd = tl.arange(0, BD)
    m = (hh < H)[:, None] & (dd < D)[None, :]
    p = tl.load(pp + t).to(tl.int64)
    pg = tl.load(tp + t * s_row + p // S).to(tl.int64)
    sl = p % S
    kv = tl.load(kp + t * skt + hh[:, None] * skh + dd[None, :], mask=m)
    vv = tl.load(vp + t * svt + hh[:, None] * svh + dd[None, :], mask=m)
    o = pg * s_page + sl * s_slot + hh[:, None] * s_head + dd[None, :]
    tl.store(kcp + o, kv, mask=m)
    tl.store(vcp + o, vv, mask=m)


def append_paged_kv_cache(k, v, k_cache, v_cache, page_table, positions):
    B, H, D = k.shape
    BD = triton.next_power_of_2(D)
    BH = min(triton.next_power_of_2(H), 2048 // BD)
    _kv_append[(B, triton.cdiv(H, BH))](
        k, v, k_cache, v_cache, page_table, positions,
        k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), page_table.stride(0),
        H, D, k_cache.shape[1], BH=BH, BD=BD, num_warps=4,
    )  # fmt: skip
