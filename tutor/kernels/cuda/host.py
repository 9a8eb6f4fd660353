"""The kernels of a learner's `.cu` file as a CUDA C++ drill's host code launches them.

A C drill's learner file holds only kernels; the launch and the host side belong to the drill
(`drills/host/<file stem>.py`): each of its functions takes the learner's kernels first, as
CuPy's RawKernel is called:

    def rms_norm(kernels, x, weight, eps=1e-6):
        y = torch.empty_like(x)
        kernels.rms_norm_kernel((rows,), (256,), (y, x, weight, n, eps))
        return y

Each launch checks its arguments against the kernel's parameters (a tensor where a pointer is,
in a dtype the pointer's type allows; a number where a scalar is), records itself in the launch
log (tutor.kernels.launches) and goes to the backend: the GPU through NVRTC's module, or the CPU
program. A launch the learner's file cannot take (no such kernel, other parameters than the
starter's) is a KernelFailure that says so, with the kernel's line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch

from tutor.course import diagnoses as dx
from tutor.kernels import launches
from tutor.kernels.base import KernelFailure
from tutor.kernels.cuda.signature import Kernel, Param
from tutor.lang.i18n import _

Dims = tuple[int, int, int]


class Backend(Protocol):
    """Where launches go: the GPU (tutor.kernels.cuda.gpu) or the CPU program."""

    def launch(
        self, kernel: Kernel, grid: Dims, block: Dims, shared: int, args: list[Any]
    ) -> None: ...


@dataclass(frozen=True)
class Arg:
    """One checked argument: a tensor for a pointer, or a number packed as its C type."""

    param: Param
    value: Any


def dims(value: int | Sequence[int], what: str) -> Dims:
    """A grid or block as three positive ints (CUDA's dim3: missing ones are 1)."""
    values = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(values) <= 3 or not all(isinstance(v, int) and v >= 0 for v in values):
        raise ValueError(f"{what} must be 1 to 3 non-negative ints, got {value!r}")
    return tuple(values) + (1,) * (3 - len(values))  # type: ignore[return-value]


class Kernels:
    """The learner's kernels by name, bound to a backend."""

    def __init__(self, found: dict[str, Kernel], backend: Backend, path: Path) -> None:
        self._found, self._backend, self.path = found, backend, path

    def __getattr__(self, name: str) -> Callable[..., None]:
        kernel = self._found.get(name)
        if kernel is None:
            known = ", ".join(self._found) or _("none")
            raise KernelFailure(
                dx.MISSING_FUNCTION,
                _("{file} does not define the kernel {name} (kernels found: {known})").format(
                    file=self.path.name, name=name, known=known
                ),
                _("Keep the __global__ functions of the starter, with their names."),
            )

        def launch(grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0) -> None:
            self.launch(kernel, dims(grid, "grid"), dims(block, "block"), list(args), shared_mem)

        return launch

    def launch(
        self, kernel: Kernel, grid: Dims, block: Dims, args: list[Any], shared: int = 0
    ) -> None:
        checked = self._checked(kernel, args)
        launches.record(launches.Launch(grid, block))
        if 0 in grid or 0 in block:
            return  # CUDA launches nothing for an empty grid; the log says it was asked
        self._backend.launch(kernel, grid, block, shared, checked)

    def _checked(self, kernel: Kernel, args: list[Any]) -> list[Arg]:
        where = f"{self.path.name}:{kernel.line}"
        if len(args) != len(kernel.params):
            raise self._signature(
                kernel,
                _("{where}: {name} takes {count} parameters; the drill passes {given}").format(
                    where=where, name=kernel.name, count=len(kernel.params), given=len(args)
                ),
            )
        checked = []
        for param, value in zip(kernel.params, args, strict=True):
            if param.pointer:
                wanted = param.dtypes
                if not isinstance(value, torch.Tensor):
                    problem = _("a pointer, where the drill passes a number")
                elif wanted == ():
                    problem = _("a pointer to {type}, a type the tutor cannot pass").format(
                        type=param.element
                    )
                elif wanted is not None and str(value.dtype).removeprefix("torch.") not in wanted:
                    problem = _("a {type}*, where the drill passes a {dtype} tensor").format(
                        type=param.element, dtype=str(value.dtype).removeprefix("torch.")
                    )
                else:
                    checked.append(Arg(param, value))
                    continue
            else:
                scalar = param.scalar
                if scalar is None:
                    problem = _("of type {type}, which the tutor cannot pass").format(
                        type=param.element
                    )
                elif isinstance(value, torch.Tensor):
                    problem = _("a {type}, where the drill passes a tensor").format(
                        type=param.element
                    )
                else:
                    checked.append(Arg(param, value))
                    continue
            raise self._signature(
                kernel,
                _("{where}: parameter {name} of {kernel} is {problem}").format(
                    where=where, name=param.name, kernel=kernel.name, problem=problem
                ),
            )
        return checked

    def _signature(self, kernel: Kernel, message: str) -> KernelFailure:
        return KernelFailure(
            dx.MISSING_FUNCTION,
            message,
            _(
                "The drill launches {name} with the starter's parameters: keep them as they are."
            ).format(name=kernel.name),
            line=kernel.line,
        )
