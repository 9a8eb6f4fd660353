"""Where a drill test's kernels run, and references that round the way that place rounds.

The backend is chosen by the drill's kernel language (tutor.kernels: Triton's interpreter must
be switched on before triton is first imported), once, in the drill plugin's
`pytest_configure`, before any learner file loads.
"""

from __future__ import annotations

import torch

from tutor.kernels.base import CPU, CUDA, Backend

__all__ = ["CPU", "CUDA", "Backend", "round_to"]


def round_to(values: torch.Tensor, dtype: torch.dtype, backend: Backend) -> torch.Tensor:
    """Convert fp32 `values` to `dtype` as a kernel's `.to(dtype)` does on `backend`.

    Triton's interpreter converts fp32 to bf16 by dropping the low 16 bits (truncation); the
    GPU, and CUDA C++ on the CPU, round to nearest even, as torch does.
    """
    values = values.to(torch.float32)
    if dtype == torch.bfloat16 and backend.bf16_truncates:
        bits = values.contiguous().view(torch.int32) & -65536  # keep sign, exponent, 7 bits
        return bits.view(torch.float32).to(torch.bfloat16)
    return values.to(dtype)
