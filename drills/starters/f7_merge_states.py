"""Drill F7: merging two partial attention results (split-KV) by their log-sum-exp.

The keys of each query were split into two parts, a and b; attention over each part gave a
value v (the softmax-weighted mean of that part's values) and lse, the natural-log
log-sum-exp of that part's scores (-inf when the part had no keys). Merge them, in fp32:

    m   = max(lse_a, lse_b)
    w_a = exp(lse_a - m),  w_b = exp(lse_b - m)
    v   = (w_a * v_a + w_b * v_b) / (w_a + w_b)       (stored in v_a's dtype)
    lse = m + log(w_a + w_b)                          (fp32)

Both parts empty (lse_a = lse_b = -inf) must give v = 0 and lse = -inf, never NaN.

Replace every `# TODO` and delete the `raise NotImplementedError` line. Run the tests with
`tutor check f7`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _merge_states_kernel(
    v_a_ptr,
    lse_a_ptr,
    v_b_ptr,
    lse_b_ptr,
    v_ptr,
    lse_ptr,
    v_a_token_stride,
    v_a_head_stride,
    v_b_token_stride,
    v_b_head_stride,
    lse_a_token_stride,
    lse_a_head_stride,
    lse_b_token_stride,
    lse_b_head_stride,
    n_heads,
    head_dim,
    BLOCK_H: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    """Grid (T, cdiv(H, BLOCK_H)): one program per token and block of BLOCK_H heads."""
    # TODO: token_idx (int64) and this program's heads; offsets over D; masks for the heads
    #       and for the [BLOCK_H, BLOCK_D] tile.
    # TODO: load lse_a and lse_b for these heads through their strides (padded heads: -inf).
    # TODO: m = max of the two; make the weights exp(lse - m) safe when both are -inf.
    # TODO: load v_a and v_b tiles (upcast to fp32), merge them with the weights.
    # TODO: store v (in v's dtype) and lse = m + log(w_a + w_b) (fp32), both contiguous.
    pass


def merge_attn_states(
    v_a: torch.Tensor, lse_a: torch.Tensor, v_b: torch.Tensor, lse_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge two partial attention results for the same queries: returns (v, lse).

    v_a, v_b are [T, H, D] (same dtype); lse_a, lse_b are [T, H] fp32 natural-log
    log-sum-exps of each part's scores (-inf for a part with no keys). In fp32:

        m = max(lse_a, lse_b);  w_a = exp(lse_a - m);  w_b = exp(lse_b - m)
        v = (w_a * v_a + w_b * v_b) / (w_a + w_b)       (in v_a's dtype)
        lse = m + log(w_a + w_b)                          (fp32)

    Both parts empty give v = 0 and lse = -inf. Any strides are accepted for the lse tensors
    (flash attention returns lse as [H, T]); each head of v must be contiguous.
    """
    # TODO: allocate v ([T, H, D], v_a's dtype) and lse ([T, H], float32), contiguous.
    # TODO: BLOCK_D = next_power_of_2(D); BLOCK_H heads per program (about 1024 values);
    #       grid (T, cdiv(H, BLOCK_H)); pass every stride, the constexprs and num_warps.
    raise NotImplementedError("TODO: write merge_attn_states")
