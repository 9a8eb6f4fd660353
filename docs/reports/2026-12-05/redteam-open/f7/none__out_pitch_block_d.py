"""f7: output v addressed with BLOCK_D as the head pitch (fine only when D is a power of 2)."""
from __future__ import annotations
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_states_kernel(v_a_ptr, lse_a_ptr, v_b_ptr, lse_b_ptr, v_ptr, lse_ptr,
                         sva_t, sva_h, svb_t, svb_h, sla_t, sla_h, slb_t, slb_h,
                         n_heads, head_dim, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, BLOCK_D)
    hk = h < n_heads
    k2 = hk[:, None] & (d < head_dim)[None, :]
    la = tl.load(lse_a_ptr + t * sla_t + h * sla_h, mask=hk, other=float("-inf"))
    lb = tl.load(lse_b_ptr + t * slb_t + h * slb_h, mask=hk, other=float("-inf"))
    va = tl.load(v_a_ptr + t * sva_t + h[:, None] * sva_h + d[None, :], mask=k2, other=0.0).to(tl.float32)
    vb = tl.load(v_b_ptr + t * svb_t + h[:, None] * svb_h + d[None, :], mask=k2, other=0.0).to(tl.float32)
    m = tl.maximum(la, lb)
    m = tl.where(m == float("-inf"), 0.0, m)
    wa = tl.exp(la - m)
    wb = tl.exp(lb - m)
    tot = wa + wb
    inv = tl.where(tot > 0, 1.0 / tot, 0.0)
    out = va * (wa * inv)[:, None] + vb * (wb * inv)[:, None]
    lse_out = m + tl.log(tot)
    tl.store(v_ptr + (t * n_heads + h[:, None]) * BLOCK_D + d[None, :],    # BUG: BLOCK_D, not head_dim
             out.to(v_ptr.dtype.element_ty), mask=k2)
    tl.store(lse_ptr + t * n_heads + h, lse_out, mask=hk)


def merge_attn_states(v_a, lse_a, v_b, lse_b):
    T, H, D = v_a.shape
    v_a = v_a if v_a.stride(2) == 1 else v_a.contiguous()
    v_b = v_b if v_b.stride(2) == 1 else v_b.contiguous()
    v = torch.empty((T, H, D), dtype=v_a.dtype, device=v_a.device)
    lse = torch.empty((T, H), dtype=torch.float32, device=v_a.device)
    bd = triton.next_power_of_2(D)
    bh = min(triton.next_power_of_2(H), max(1, 1024 // bd))
    _merge_states_kernel[(T, triton.cdiv(H, bh))](
        v_a, lse_a, v_b, lse_b, v, lse,
        v_a.stride(0), v_a.stride(1), v_b.stride(0), v_b.stride(1),
        lse_a.stride(0), lse_a.stride(1), lse_b.stride(0), lse_b.stride(1),
        H, D, BLOCK_H=bh, BLOCK_D=bd, num_warps=4)
    return v, lse
