"""An f6 mutant: the floor on the scale instead of on amax, max(amax / 127, 1e-10): zero and
tiny rows get a scale 127 times too large.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _q(x_ptr, q_ptr, s_ptr, n_cols, sx, sq, ub, B: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, B)
    m = c < n_cols
    x = tl.load(x_ptr + r * sx + c, mask=m, other=0.0).to(tl.float32)
    amax = tl.minimum(tl.max(tl.abs(x), axis=0), ub)
    scale = tl.maximum(amax / 127.0, 1e-10)
    v = tl.clamp(x / scale, -127.0, 127.0)
    tl.store(q_ptr + r * sq + c, (v + tl.where(v >= 0, 0.5, -0.5)).to(tl.int8), mask=m)
    tl.store(s_ptr + r, scale)


def quant_per_token(x, amax_ub=None):
    T, H = x.shape
    q = torch.empty((T, H), dtype=torch.int8, device=x.device)
    s = torch.empty(T, dtype=torch.float32, device=x.device)
    _q[(T,)](
        x,
        q,
        s,
        H,
        x.stride(0),
        q.stride(0),
        float("inf") if amax_ub is None else float(amax_ub),
        B=triton.next_power_of_2(H),
        num_warps=4,
    )
    return q, s
