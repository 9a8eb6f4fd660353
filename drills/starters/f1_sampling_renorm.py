"""F1: Top-p and top-k renormalisation. Write the kernel and its host wrapper.

Run the tests with `tutor check f1`; the lesson is `tutor lesson f1`.
"""

from __future__ import annotations

import torch
import triton  # noqa: F401 - the kernel is yours to write
import triton.language as tl  # noqa: F401


# TODO: the @triton.jit kernel.


def top_p_renorm(x: torch.Tensor) -> torch.Tensor:
    """TODO: what top_p_renorm computes (the formula), its shapes and dtypes."""
    raise NotImplementedError("TODO: write top_p_renorm")

def top_k_renorm(x: torch.Tensor) -> torch.Tensor:
    """TODO: what top_k_renorm computes (the formula), its shapes and dtypes."""
    raise NotImplementedError("TODO: write top_k_renorm")
