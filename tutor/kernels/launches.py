"""The launch log: every kernel launch of this process as evidence for diagnoses.

A result computed with torch alone launches nothing (`torch-fallback`); a grid that rounds down
to nothing launches a kernel of zero programs (`grid-too-small`, even when no output value was
written at all). Each kernel language's hooks (tutor.kernels.<name>) call `record` once per
launch, whatever launched it (the learner's wrapper, an autotuner, a drill's host code).

Each launch is kept as a `Launch`: its grid and the power-of-two block sizes it was given. A
claim that the grid stopped short at some index needs a grid axis (or a factor of a 1-D grid)
times one of those blocks to land exactly there (tutor.harness.checks).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

_count = 0
_programs = 0  # programs asked for by all launches so far (unknown grids count as one)


@dataclass(frozen=True)
class Launch:
    """One kernel launch as evidence: its grid (None when it cannot be read) and the
    power-of-two sizes among its compile-time arguments (the candidates for its blocks)."""

    grid: tuple[int, ...] | None
    blocks: tuple[int, ...]


RECENT = 256  # launches kept: more than any one call of a drill function makes
_recent: deque[tuple[int, Launch]] = deque(maxlen=RECENT)  # (its count, the launch)


def record(launch: Launch) -> None:
    """One more launch of this process."""
    global _count, _programs
    _count += 1
    _programs += 1 if launch.grid is None else math.prod(launch.grid)
    _recent.append((_count, launch))


def count() -> int:
    """Launches so far in this process."""
    return _count


def since(mark: int) -> list[Launch]:
    """The launches after the `mark`-th (a `count()` taken before them), oldest first."""
    return [launch for number, launch in _recent if number > mark]


def programs() -> int:
    """Programs asked for by every launch so far in this process."""
    return _programs
