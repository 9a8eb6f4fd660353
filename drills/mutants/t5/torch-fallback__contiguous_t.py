"""Mutant of t5: torch does the transpose; the kernel is never launched."""

import torch


def transpose(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()
