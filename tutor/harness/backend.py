"""Pick where kernels run and make references round the way that place rounds.

On the CPU, Triton's interpreter must be switched on before `triton` is first imported, because
`@triton.jit` decides at definition time whether it makes an interpreted function. So this
module never imports triton at the top, and `select` must run before any learner file loads.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import torch

from tutor.states import BackendName

CPU = BackendName.CPU
CUDA = BackendName.CUDA


@dataclass(frozen=True)
class Backend:
    name: str  # CPU or CUDA
    device: str  # the torch device tests allocate on
    device_name: str

    @property
    def is_cpu(self) -> bool:
        return self.name == CPU


def select(force_cpu: bool = False) -> Backend:
    """The GPU when torch sees one and the CPU was not asked for, else the interpreter."""
    if not force_cpu and os.environ.get("TRITON_INTERPRET") != "1" and torch.cuda.is_available():
        return Backend(CUDA, "cuda", torch.cuda.get_device_name())
    os.environ["TRITON_INTERPRET"] = "1"
    if not _library_interpreted():
        # Forked from a warm process that imported triton for the GPU, which torch cannot
        # use after all: start again as a cold run, where triton is imported for the CPU.
        from tutor.zygote import restart_cold

        restart_cold()
    # Make the interpreter run float arguments, libdevice and name-imported builtins as the GPU
    # does (tutor/harness/interpreter.py); it imports triton, now that the switch is on.
    from tutor.harness import interpreter

    interpreter.install()
    return Backend(CPU, "cpu", "CPU (Triton interpreter)")


def _library_interpreted() -> bool:
    """Whether Triton's library kernels (tl.sum, ...) were made for the interpreter (or are not
    made yet): triton makes them when it is imported, for what TRITON_INTERPRET said then."""
    if "triton.language" not in sys.modules:
        return True
    import triton.language as tl

    return type(tl.sum).__name__ == "InterpretedFunction"


def round_to(values: torch.Tensor, dtype: torch.dtype, backend: Backend) -> torch.Tensor:
    """Convert fp32 `values` to `dtype` as a kernel's `.to(dtype)` does on `backend`.

    The interpreter converts fp32 to bf16 by dropping the low 16 bits (truncation); the GPU
    rounds to nearest even, as torch does.
    """
    values = values.to(torch.float32)
    if dtype == torch.bfloat16 and backend.is_cpu:
        bits = values.contiguous().view(torch.int32) & -65536  # keep sign, exponent, 7 bits
        return bits.view(torch.float32).to(torch.bfloat16)
    return values.to(dtype)
