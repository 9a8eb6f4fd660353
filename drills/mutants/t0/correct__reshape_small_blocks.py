"""A correct t0 written differently: reshape(-1) (which copies a strided view), blocks of 128
with a grid callable built from the constexpr, int32 offsets (fine below 2**31 elements)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _vadd(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = idx < n
    a = tl.load(a_ptr + idx, mask=live, other=0.0)
    b = tl.load(b_ptr + idx, mask=live, other=0.0)
    tl.store(c_ptr + idx, (a.to(tl.float32) + b.to(tl.float32)).to(c_ptr.dtype.element_ty),
             mask=live)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a, b = x.reshape(-1), y.reshape(-1)
    c = torch.empty(a.numel(), dtype=x.dtype, device=x.device)
    n = c.numel()
    _vadd[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](a, b, c, n, BLOCK=128, num_warps=1)
    return c.view(x.shape)
