"""Mutant of t0: a grid callable that truncates, int(n / BLOCK), with blocks of 256: the
elements after the last full block are never written."""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    total = tl.load(x_ptr + offs, mask=m).to(tl.float32) + tl.load(y_ptr + offs, mask=m).to(
        tl.float32
    )
    tl.store(out_ptr + offs, total.to(out_ptr.dtype.element_ty), mask=m)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    xs, ys = x.flatten(), y.flatten()
    out = torch.empty_like(xs)
    n = xs.numel()

    def grid(meta):
        return (int(n / meta["BLOCK"]),)

    _add_kernel[grid](xs, ys, out, n, BLOCK=256, num_warps=2)
    return out.view_as(x)
