"""Fence the tensors the learner's code allocates, so an unmasked store is caught, not fatal.

While a learner's function runs, every new contiguous floating-point tensor made by a torch
factory (`torch.empty`, `empty_like`, `zeros`, `new_empty`, ...) is handed out as a view into a
larger buffer with sentinel values on both sides. A store past the end then lands in the
sentinels, where `check` sees it, instead of in memory the process does not own (which kills
the CPU interpreter with heap corruption, or is silently wrong on the GPU).
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from tutor import diagnoses as dx
from tutor.harness.failures import DrillFailure

GUARD = 1 << 14  # elements on each side: more than any block's overhang past a tensor's end
SENTINEL = -12345.0  # a value no drill produces

_FACTORIES = {
    torch.empty, torch.empty_like, torch.zeros, torch.zeros_like, torch.ones, torch.ones_like,
    torch.full, torch.full_like, torch.Tensor.new_empty, torch.Tensor.new_zeros,
    torch.Tensor.new_ones, torch.Tensor.new_full,
}


class GuardedAllocations(TorchFunctionMode):
    """While active, each new contiguous float tensor is a view into a larger sentinel buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.buffers: list[tuple[torch.Tensor, int]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if (
            func not in _FACTORIES
            or not isinstance(result, torch.Tensor)
            or not result.is_floating_point()
            or result.numel() == 0
            or not result.is_contiguous()
        ):
            return result
        n = result.numel()
        buffer = torch.full(
            (n + 2 * GUARD,), SENTINEL, dtype=result.dtype, device=result.device
        )
        view = buffer[GUARD : GUARD + n].view(result.shape)
        view.copy_(result)  # keep what zeros / ones / full put there
        self.buffers.append((buffer, n))
        return view

    def check(self, name: str) -> None:
        """Fail as `missing-mask` if any sentinel around an allocation was overwritten."""
        for buffer, n in self.buffers:
            guards = torch.cat([buffer[:GUARD], buffer[GUARD + n :]])
            changed = int((guards != torch.full_like(guards, SENTINEL)).sum())
            if changed:
                raise DrillFailure(
                    dx.MISSING_MASK,
                    f"{name} wrote {changed} values just outside a tensor it allocated",
                    "Lanes past the end of the data were stored: a tl.store without mask=.",
                )
