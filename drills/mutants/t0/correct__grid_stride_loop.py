"""A correct t0 written differently: a fixed, small grid; each program strides over the blocks
(block p, p + programs, p + 2 * programs, ...), as persistent kernels do."""

import torch
import triton
import triton.language as tl

PROGRAMS = 4


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    for block in tl.range(pid, tl.cdiv(n_elements, BLOCK_SIZE), step):
        offsets = block * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x_flat = x.contiguous().view(-1)
    y_flat = y.contiguous().view(-1)
    out = torch.empty_like(x_flat)
    n = out.numel()
    grid = (min(PROGRAMS, triton.cdiv(n, 2048)),)
    _add_kernel[grid](x_flat, y_flat, out, n, BLOCK_SIZE=2048, num_warps=8)
    return out.view(x.shape)
