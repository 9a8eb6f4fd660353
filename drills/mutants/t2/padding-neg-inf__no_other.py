"""Mutant of t2: a masked load without other=, so padded lanes come in as 0 (or garbage)."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax(inp, out, stride_in, stride_out, N, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    valid = offs < N
    vals = tl.load(inp + r * stride_in + offs, mask=valid)
    vals = vals.to(tl.float32)
    mx = tl.max(vals, axis=0)
    e = tl.exp(vals - mx)
    total = tl.sum(e, axis=0)
    tl.store(out + r * stride_out + offs, (e / total).to(out.dtype.element_ty), mask=valid)


def softmax(x):
    shape = x.shape
    x2 = x.contiguous().view(-1, shape[-1])
    out = torch.empty_like(x2)
    rows, n = x2.shape
    row_softmax[(rows,)](x2, out, x2.stride(0), out.stride(0), n,
                         BLOCK=triton.next_power_of_2(n), num_warps=8)
    return out.view(shape)
