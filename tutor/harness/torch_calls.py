"""Which of a drill's core torch operations a learner's function calls while it runs.

A drill declares in drills.yaml the torch operations that do its work (`torch_core:`, e.g.
`[matmul, mm, linear]` for a matmul drill). A call to one of them while the learner's function
runs means torch did that work, even when a Triton kernel was launched too: the bias in Triton
and the matmul through `F.linear`, the scaling in Triton and the softmax in torch. That is
`torch-fallback`, as a function that launches nothing is.

Calls are matched by the name of the torch function or Tensor method, whichever way it is
spelled: `torch.matmul(a, b)`, `a.matmul(b)` and `a @ b` are all `matmul`; `F.softmax`,
`torch.softmax` and `x.softmax` are `softmax`; an in-place `x.exp_()` is `exp`, a reflected
`__rmatmul__` is `matmul`. Allocations, views, copies and casts are no drill's core, so the
wrappers of the reference solutions never match.
"""

from __future__ import annotations

import re
from typing import Any

from torch.overrides import TorchFunctionMode


def operation(func: Any) -> str:
    """The plain name a call of `func` is matched by: `__rmatmul__` -> "matmul", `exp_` -> "exp"."""
    name = getattr(func, "__name__", "") or ""
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        if _REFLECTED.match(name):  # __rmatmul__, __imul__: the operator's own name
            name = name[1:]
    return name.rstrip("_")


# The operations that copy a tensor: fine in any drill's wrapper, unless the drill's core is the
# copy itself (a transpose).
COPIES = frozenset({"contiguous", "clone", "copy"})

_REFLECTED = re.compile(r"^[ri](add|sub|mul|matmul|truediv|floordiv|div|pow|mod)$")


def spelled(func: Any) -> str:
    """How the learner wrote the call, near enough to find it: `torch.nn.functional.linear`."""
    name = getattr(func, "__name__", "?")
    module = getattr(func, "__module__", None) or ""
    qualified = getattr(func, "__qualname__", "") or ""
    if module.startswith(("torch.nn.functional", "torch._C._nn")):
        return f"torch.nn.functional.{name}"
    if qualified.startswith(("TensorBase.", "Tensor.")):
        return f"Tensor.{name}" + (" (a @ b)" if operation(func) == "matmul" else "")
    return f"torch.{name}"


class CoreCalls(TorchFunctionMode):
    """While active, records the calls of the operations named in `core`, in order, once each.

    Entered inside (after) the allocation fence, so it sees the learner's own calls and not
    the fence's copies.
    """

    def __init__(self, core: frozenset[str] | tuple[str, ...]) -> None:
        super().__init__()
        self.core = frozenset(core)
        self.calls: list[str] = []  # how each call was spelled
        self.operations: set[str] = set()  # the plain names of the operations called

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.core and operation(func) in self.core:
            shown = spelled(func)
            self.operations.add(operation(func))
            if shown not in self.calls:
                self.calls.append(shown)
        return func(*args, **(kwargs or {}))
