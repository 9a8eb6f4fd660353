"""Fence and fill the tensors the learner's code allocates, so mistakes read the same every run.

While a learner's function runs, every new contiguous float or integer tensor made by a torch
factory (`torch.empty`, `empty_like`, `zeros`, `new_empty`, ...) is handed out as a view into a
larger buffer with sentinel values on both sides:

- a store past the end lands in the sentinels, where `check` sees it, instead of in memory the
  process does not own (which kills the CPU interpreter with heap corruption, or is silently
  wrong on the GPU);
- memory from `torch.empty` is filled with the same sentinel, so an output the kernel never
  writes holds a known value on every run and backend (never-written positions are then told
  apart from wrong ones, and a grid that is too small reads the same each time).

A copy the learner makes of a float input (`x.contiguous()`, `x.clone()`) is fenced too, with
the guard the test's inputs have (NaN, or 0 in `inputs.guard_fill`): a load past its end reads
what a load past the test's own input reads, on every run, instead of whatever memory follows.

`check` tells a run past the end (`missing-mask`) from rows stored with the wrong stride
(`row-stride`): the latter also leaves parts of the tensor itself unwritten.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from tutor.course import diagnoses as dx
from tutor.harness.failures import HarnessFailure
from tutor.harness.inputs import guard_value
from tutor.lang.i18n import N_, _

GUARD = 1 << 14  # elements on each side: more than any block's overhang past a tensor's end
# How an access past the end happens, in every missing-mask message: no mask at all, or a mask
# that is one lane too generous or checks one bound of two.
LEAKY_MASK = N_(
    "no mask=, or a mask that lets lanes past the end through "
    "(<= where < belongs, or one bound of two)"
)
SENTINEL = -12345.0  # a float no drill produces (bf16 holds it as -12352)

_FACTORIES = {
    torch.empty,
    torch.empty_like,
    torch.zeros,
    torch.zeros_like,
    torch.ones,
    torch.ones_like,
    torch.full,
    torch.full_like,
    torch.Tensor.new_empty,
    torch.Tensor.new_zeros,
    torch.Tensor.new_ones,
    torch.Tensor.new_full,
}
# Factories whose memory is left as it was: their tensors start filled with the sentinel.
_UNINITIALISED = {torch.empty, torch.empty_like, torch.Tensor.new_empty}
# Calls that may copy a tensor into new memory: the learner's own copy of an input.
_COPIES = {torch.Tensor.contiguous, torch.Tensor.clone, torch.clone}


# What memory from torch.empty holds inside the fence (the sentinel unless `empty_as_zeros`).
_empty_as_zeros = False


@contextmanager
def empty_as_zeros() -> Iterator[None]:
    """While active, memory from torch.empty and kin starts as 0, as torch.zeros gives it (the
    guards around it keep the sentinel): a test re-runs a call under it to see whether its
    output reads the same from a buffer of zeros, so a mistake is named the same whichever
    factory the learner chose."""
    global _empty_as_zeros
    before, _empty_as_zeros = _empty_as_zeros, True
    try:
        yield
    finally:
        _empty_as_zeros = before


def fill_value(dtype: torch.dtype) -> float | int | None:
    """The sentinel for tensors of `dtype`: SENTINEL for floats, the lowest integer for ints.

    None for dtypes that are not fenced (bool, complex, 8-bit floats whose range cannot hold it).
    """
    if dtype.is_floating_point:
        return SENTINEL if torch.finfo(dtype).max > abs(SENTINEL) else None
    if dtype.is_complex or dtype == torch.bool:
        return None
    return torch.iinfo(dtype).min  # an int8 quantizer clamps to +-127, never -128


def never_written(values: torch.Tensor) -> torch.Tensor:
    """Where `values` still holds the fill value (all False for a dtype that is not fenced)."""
    fill = fill_value(values.dtype)
    if fill is None:
        return torch.zeros(values.shape, dtype=torch.bool, device=values.device)
    return values == torch.tensor(fill, dtype=values.dtype, device=values.device)


def fenced_output(fn: Callable[..., Any], *args: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """`fn(*args)` called again with its allocations fenced, for evidence: the tensor it returns
    and where that tensor was never written, so an output can be looked at even when a store
    left it. None where the call fails or returns no tensor: the first call's failure stands."""
    try:
        with GuardedAllocations():
            out = fn(*args)
    except Exception:  # noqa: BLE001 - evidence only
        return None
    if not isinstance(out, torch.Tensor):
        return None
    return out, never_written(out.detach())


class GuardedAllocations(TorchFunctionMode):
    """While active, each new contiguous tensor is a view into a larger sentinel buffer."""

    def __init__(self) -> None:
        super().__init__()
        # (the buffer, the tensor's size, the fill around it, the tensor's shape)
        self.buffers: list[tuple[torch.Tensor, int, float | int, tuple[int, ...]]] = []
        # The storages of tensors handed out filled with the sentinel (torch.empty and kin),
        # and of those handed out with values (zeros, ones, full): a tensor of the first kind
        # that holds no sentinel any more was written, whatever it holds now.
        self.sentinel_storages: set[int] = set()
        self.valued_storages: set[int] = set()
        # Whether a float input was copied, its copy fenced with the inputs' guard: then NaN in
        # the output can have come in from past the copy's end, as from past the inputs'.
        self.copied_inputs = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if (
            func not in _FACTORIES | _COPIES
            or not isinstance(result, torch.Tensor)
            or fill_value(result.dtype) is None
            or result.numel() == 0
            or not result.is_contiguous()
        ):
            return result
        fill = fill_value(result.dtype)
        if func in _COPIES:
            source = args[0] if args else None
            if not isinstance(source, torch.Tensor) or _same_storage(source, result):
                return result  # already contiguous: no copy was made
            if result.dtype.is_floating_point:
                fill = guard_value()  # around a copy of an input, what is around the input
                self.copied_inputs = True
        n = result.numel()
        buffer = torch.full((n + 2 * GUARD,), fill, dtype=result.dtype, device=result.device)
        view = buffer[GUARD : GUARD + n].view(result.shape)
        if func not in _UNINITIALISED:
            view.copy_(result)  # keep what zeros / ones / full / the copy put there
        elif _empty_as_zeros:
            view.zero_()
        kind = self.sentinel_storages if func in _UNINITIALISED else self.valued_storages
        kind.add(buffer.untyped_storage().data_ptr())
        self.buffers.append((buffer, n, fill, tuple(result.shape)))
        return view

    def started_as_sentinel(self) -> frozenset[int]:
        """The storages (by address) that began filled with the sentinel and only so: an
        address freed and handed out again by another kind of factory is left out."""
        return frozenset(self.sentinel_storages - self.valued_storages)

    def check(self, name: str) -> None:
        """Fail if any sentinel around an allocation was overwritten, naming how."""
        for buffer, n, guard, shape in self.buffers:
            fill = torch.tensor(guard, dtype=buffer.dtype, device=buffer.device)
            guards = torch.cat([buffer[:GUARD], buffer[GUARD + n :]])
            changed = int((~_same_values(guards, fill)).sum())
            if not changed:
                continue
            holes = int(_same_values(buffer[GUARD : GUARD + n], fill).sum())
            if holes:
                raise HarnessFailure(
                    dx.ROW_STRIDE,
                    _(
                        "{name} wrote {changed} values outside a tensor it allocated, while "
                        "{holes} of the tensor's own {n} values were never written"
                    ).format(name=name, changed=changed, holes=holes, n=n),
                    _(
                        "Values landed in the wrong places, not just past the end: rows (or "
                        "tiles) stored with a stride that is not the tensor's."
                    ),
                    facts=_layout_facts(buffer, fill, shape),
                )
            raise HarnessFailure(
                dx.MISSING_MASK,
                _("{name} wrote {changed} values just outside a tensor it allocated").format(
                    name=name, changed=changed
                ),
                _("Lanes past the end of the data were stored: a tl.store with {why}.").format(
                    why=_(LEAKY_MASK)
                ),
            )


# How a row-stride failure in a tensor the learner allocated is told (tutor.course.hints: the
# row-stride ladder's stages for it speak of that tensor, not of an input).
ALLOCATED = "allocated"


def _layout_facts(buffer: torch.Tensor, fill: torch.Tensor, shape: tuple[int, ...]) -> dict:
    """For the hint texts: the allocated tensor's shape and row stride, and how far apart the
    kernel stored its rows when the stores show it (each run of written values starting where
    the one before started plus that distance)."""
    row = shape[-1] if shape else 1
    facts: dict = {
        "way": ALLOCATED,
        "shape": "[" + ", ".join(str(d) for d in shape) + "]",
        "stride": row,
    }
    written = (~_same_values(buffer, fill)).nonzero().reshape(-1) - GUARD
    if written.numel() < 2:
        return facts
    breaks = (written[1:] != written[:-1] + 1).nonzero().reshape(-1)
    starts = torch.cat([written[:1], written[breaks + 1]])
    if starts.numel() >= 2:
        gaps = starts[1:] - starts[:-1]
        if bool((gaps == gaps[0]).all()) and int(gaps[0]) != row:
            facts["stored"] = int(gaps[0])
    return facts


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _same_values(values: torch.Tensor, fill: torch.Tensor) -> torch.Tensor:
    """Where `values` equal `fill`, NaN counting as equal to a NaN fill."""
    if bool(fill.isnan()):
        return values.isnan()
    return values == fill
