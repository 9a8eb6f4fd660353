"""Mutant of t0: flattening with as_strided(stride 1) reinterprets memory instead of copying,
so a transposed input is read in memory order; the output is a fresh contiguous tensor."""

import torch
import triton
import triton.language as tl


@triton.jit
def _vadd(x_ptr, y_ptr, z_ptr, total, CHUNK: tl.constexpr):
    start = tl.program_id(0) * CHUNK
    lanes = start + tl.arange(0, CHUNK)
    live = lanes < total
    s = tl.load(x_ptr + lanes, mask=live).to(tl.float32) + tl.load(y_ptr + lanes, mask=live)
    tl.store(z_ptr + lanes, s.to(z_ptr.dtype.element_ty), mask=live)


def _flat(t: torch.Tensor) -> torch.Tensor:
    return torch.as_strided(t, (t.numel(),), (1,))


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    total = x.numel()
    z = torch.empty(total, dtype=x.dtype, device=x.device)
    chunk = 2048
    _vadd[(triton.cdiv(total, chunk),)](_flat(x), _flat(y), z, total, CHUNK=chunk, num_warps=8)
    return z.view(x.shape)
