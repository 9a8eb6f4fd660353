"""Mutant for M2: the matmul and the bias through F.linear in torch, only the GELU in a
Triton kernel: half a fallback (a kernel was launched, but torch did the drill's work)."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _gelu(v_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    v = tl.load(v_ptr + offs, mask=keep, other=0.0).to(tl.float32)
    z = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    y = 0.5 * v * (1.0 + (2.0 * tl.sigmoid(2.0 * z) - 1.0))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=keep)


def linear_gelu(x, w, b):
    v = F.linear(x.float(), w.float(), b.float()).contiguous()
    y = torch.empty(v.shape, dtype=x.dtype, device=x.device)
    _gelu[(triton.cdiv(v.numel(), 1024),)](v, y, v.numel(), BLOCK=1024)
    return y
