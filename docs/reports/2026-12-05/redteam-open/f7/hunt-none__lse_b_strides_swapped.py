"""Mistake: the wrapper passes lse_b's strides in the wrong order (lse_b.stride(1), lse_b.stride(0)); lse_a's are right."""
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_states_kernel(v_a_ptr, lse_a_ptr, v_b_ptr, lse_b_ptr, v_ptr, lse_ptr, v_a_token_stride, v_a_head_stride, v_b_token_stride, v_b_head_stride,
                         lse_a_token_stride, lse_a_head_stride, lse_b_token_stride, lse_b_head_stride, n_heads, head_dim,
                         BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, BLOCK_D)
    hmask = heads < n_heads
    mask = hmask[:, None] & (d < head_dim)[None, :]
    la = tl.load(lse_a_ptr + t * lse_a_token_stride + heads * lse_a_head_stride, mask=hmask, other=float("-inf"))
    lb = tl.load(lse_b_ptr + t * lse_b_token_stride + heads * lse_b_head_stride, mask=hmask, other=float("-inf"))
    m = tl.maximum(la, lb)
    m = tl.where(m == float("-inf"), 0.0, m)
    wa = tl.exp(la - m)
    wb = tl.exp(lb - m)
    tot = wa + wb
    inv = tl.where(tot > 0, 1.0 / tot, 0.0)
    va = tl.load(v_a_ptr + t * v_a_token_stride + heads[:, None] * v_a_head_stride + d[None, :], mask=mask, other=0.0).to(tl.float32)
    vb = tl.load(v_b_ptr + t * v_b_token_stride + heads[:, None] * v_b_head_stride + d[None, :], mask=mask, other=0.0).to(tl.float32)
    v = va * (wa * inv)[:, None] + vb * (wb * inv)[:, None]
    tl.store(v_ptr + (t * n_heads + heads[:, None]) * head_dim + d[None, :], v.to(v_ptr.dtype.element_ty), mask=mask)
    tl.store(lse_ptr + t * n_heads + heads, m + tl.log(tot), mask=hmask)


def merge_attn_states(v_a, lse_a, v_b, lse_b):
    T, H, D = v_a.shape
    if v_a.stride(2) != 1:
        v_a = v_a.contiguous()
    if v_b.stride(2) != 1:
        v_b = v_b.contiguous()
    v = torch.empty((T, H, D), dtype=v_a.dtype, device=v_a.device)
    lse = torch.empty((T, H), dtype=torch.float32, device=v_a.device)
    bd = triton.next_power_of_2(D)
    bh = min(triton.next_power_of_2(H), max(1, 1024 // bd))
    _merge_states_kernel[(T, triton.cdiv(H, bh))](v_a, lse_a, v_b, lse_b, v, lse, v_a.stride(0), v_a.stride(1), v_b.stride(0), v_b.stride(1),
                                                  lse_a.stride(0), lse_a.stride(1), lse_b.stride(1), lse_b.stride(0), H, D, BLOCK_H=bh, BLOCK_D=bd)
    return v, lse
