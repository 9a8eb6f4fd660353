"""Mutant of t0: no kernel at all; torch.add writes into a preallocated output."""

import torch


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    torch.add(x.float(), y.float(), out=out)
    return out
