"""A correct f7 written differently: the (token, head) pairs flattened into rows, BLOCK_R rows
per program in one 2-D block, weights by exp2 and the LSE by log2, converted at the ends.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _merge_rows(
    va,
    la,
    vb,
    lb,
    vo,
    lo,
    sva_t,
    sva_h,
    svb_t,
    svb_h,
    sla_t,
    sla_h,
    slb_t,
    slb_h,
    n_rows,
    H,
    D,
    BLOCK_R: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    LOG2E: tl.constexpr = 1.4426950408889634
    LN2: tl.constexpr = 0.6931471805599453
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rok = r < n_rows
    t = (r // H).to(tl.int64)
    h = (r % H).to(tl.int64)
    d = tl.arange(0, BLOCK_D)
    dok = d < D
    a = tl.load(la + t * sla_t + h * sla_h, mask=rok, other=float("-inf")) * LOG2E
    b = tl.load(lb + t * slb_t + h * slb_h, mask=rok, other=float("-inf")) * LOG2E
    hi = tl.maximum(a, b)
    empty = hi == float("-inf")
    hi0 = tl.where(empty, 0.0, hi)
    wa = tl.exp2(a - hi0)
    wb = tl.exp2(b - hi0)
    tot = wa + wb
    tot_safe = tl.where(empty, 1.0, tot)
    m2 = rok[:, None] & dok[None, :]
    xa = tl.load(va + t[:, None] * sva_t + h[:, None] * sva_h + d[None, :], mask=m2, other=0.0)
    xb = tl.load(vb + t[:, None] * svb_t + h[:, None] * svb_h + d[None, :], mask=m2, other=0.0)
    out = (
        xa.to(tl.float32) * (wa / tot_safe)[:, None] + xb.to(tl.float32) * (wb / tot_safe)[:, None]
    )
    out = tl.where(empty[:, None], 0.0, out)
    rr = r.to(tl.int64)
    tl.store(vo + rr[:, None] * D + d[None, :], out.to(vo.dtype.element_ty), mask=m2)
    lse = tl.where(empty, float("-inf"), (hi + tl.log2(tot_safe)) * LN2)
    tl.store(lo + rr, lse, mask=rok)


def merge_attn_states(v_a, lse_a, v_b, lse_b):
    T, H, D = v_a.shape
    if v_a.stride(-1) != 1:
        v_a = v_a.contiguous()
    if v_b.stride(-1) != 1:
        v_b = v_b.contiguous()
    v = torch.empty((T, H, D), dtype=v_a.dtype, device=v_a.device)
    lse = torch.empty((T, H), dtype=torch.float32, device=v_a.device)
    BR = 16
    _merge_rows[(triton.cdiv(T * H, BR),)](
        v_a,
        lse_a,
        v_b,
        lse_b,
        v,
        lse,
        v_a.stride(0),
        v_a.stride(1),
        v_b.stride(0),
        v_b.stride(1),
        lse_a.stride(0),
        lse_a.stride(1),
        lse_b.stride(0),
        lse_b.stride(1),
        T * H,
        H,
        D,
        BLOCK_R=BR,
        BLOCK_D=triton.next_power_of_2(D),
        num_warps=2,
    )
    return v, lse
