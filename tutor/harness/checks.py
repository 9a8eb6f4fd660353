"""Compare a learner's output with the reference and, on mismatch, name the mistake.

`expect_close` is the one comparison every drill test uses. On mismatch it tries, in order:
shape and dtype; the suspect references the test passed (what each known mistake would produce);
never-written positions (a grid too small, an output never written: the sentinel of an empty
tensor, or the exact zeros of a torch.zeros one from a boundary on); a re-run on fp32 inputs
(bf16 arithmetic without an upcast); NaN from guarded memory (a missing mask, confirmed by the
drill plugin's re-run with other guard values); and the generic patterns (NaN/inf, output
untouched, only the tail wrong). The first that fits becomes the failure's diagnosis; the message
says what differs and by how much, and `where` / `error_map` say where the output is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from tutor import kernels
from tutor.course import diagnoses as dx
from tutor.harness import errormap, learner, story_text
from tutor.harness.allocations import LEAKY_MASK, never_written
from tutor.harness.failures import DrillFailure, HarnessFailure
from tutor.lang import mapwords
from tutor.lang.i18n import _, ngettext
from tutor.run.agreement import END_UNWRITTEN, GRID_STOPS, NO_GRID_STOPS
from tutor.run.results import BACKEND_NOTE, ONE_STEP

# What a never-written output holds, as a failure's facts["fill"] (for the hint texts).
EMPTY = "empty"  # the sentinel the fence fills torch.empty with
ZEROS = "zeros"  # the zeros of torch.zeros


@dataclass(frozen=True)
class Suspect:
    """What the output would be if the learner made the mistake `diagnosis`."""

    diagnosis: str
    value: torch.Tensor
    story: str  # completes "your output matches ..." e.g. "the variance with padded lanes in it"
    # How the mistake was written, when its ladder has stages of its own for it (a failure's
    # facts["way"]: tutor.course.hints): "one-half" for a sign flipped in one half only.
    way: str = ""

    def __post_init__(self) -> None:
        story_text.record(self.story)

    def details_for(self, what: str) -> str:
        """ "Your <what> matches <story>.", both in the learner's language when translated."""
        return _("Your {what} matches {story}.").format(
            what=story_text.text(what), story=story_text.text(self.story)
        )


# What a test offers expect_close: the suspects, or a function that builds them. A function is
# called only for an output that needs naming: building every mistake's output often costs more
# than the kernel and the comparison together, and a right output needs none of them.
Suspects = Sequence[Suspect] | Callable[[], Sequence[Suspect]]


def _built(suspects: Suspects) -> Sequence[Suspect]:
    return suspects() if callable(suspects) else suspects


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def expect_close(
    actual: Any,
    expected: torch.Tensor,
    *,
    what: str,
    tol: Tolerance,
    suspects: Suspects = (),
    dtype_diagnosis: str = dx.WRONG_DTYPE,
    untouched: torch.Tensor | None = None,
    fp32_rerun: Callable[[], torch.Tensor] | None = None,
    fp32_expected: torch.Tensor | None = None,
    reads_guarded: bool = False,
    tail: torch.Tensor | None = None,
) -> None:
    """Fail with a diagnosed `DrillFailure` unless `actual` matches `expected` within `tol`.

    - `suspects`: what each known mistake would produce (`Suspect`s), or a function that builds
      them, called only when the output is wrong.
    - `untouched`: what the output buffer held before the call (for in-place outputs).
    - `fp32_rerun` / `fp32_expected`: the learner's function on the same inputs cast to fp32 and
      its reference; if that passes while bf16 fails, bf16 arithmetic lacked an upcast.
    - `reads_guarded`: the inputs sit in buffers whose out-of-bounds memory is NaN, so NaN in the
      output means a load without a mask.
    - `tail`: a bool mask of the positions in the last, partly padded block.
    """
    english_what, what = what, story_text.text(what)
    if story_text.forcing:  # collecting the stories (tutor.harness.story_collect), not judging
        if not _built(suspects):
            raise HarnessFailure(dx.MISMATCH, "a comparison failed on purpose, to collect stories")
        return
    if not isinstance(actual, torch.Tensor):
        raise HarnessFailure(
            dx.WRONG_SHAPE,
            _("{what} should be a tensor, got {kind}").format(
                what=what, kind=type(actual).__name__
            ),
        )
    if tuple(actual.shape) != tuple(expected.shape):
        raise HarnessFailure(
            dx.WRONG_SHAPE,
            _("{what} has shape {got}, expected {want}").format(
                what=what, got=tuple(actual.shape), want=tuple(expected.shape)
            ),
        )
    if actual.dtype != expected.dtype:
        raise HarnessFailure(
            dtype_diagnosis,
            _("{what} has dtype {got}, expected {want}").format(
                what=what, got=_name(actual.dtype), want=_name(expected.dtype)
            ),
        )
    if actual.device.type != expected.device.type:
        raise HarnessFailure(
            dx.MISMATCH,
            _("{what} is on {device}, expected {expected}").format(
                what=story_text.text(what), device=actual.device, expected=expected.device
            ),
        )
    got, want = actual.detach().float(), expected.detach().float()
    to_reference = _excess(got, want, tol)
    if to_reference <= 1.0:
        return
    message = describe_mismatch(got, want, tol, what)
    wrong, unwritten, located = _located(actual, expected, tol)
    call = learner.call_behind(actual)  # the launches that made this output, for grid claims
    # Only an end never written, and whether the launches can have stopped there: the evidence
    # for grid-too-small here, and for or against it elsewhere in the run (tutor.run.agreement).
    end = _unwritten_end(wrong, unwritten)
    grid_stops = end is not None and _grid_could_stop_at(end.starts, call)
    grid_claim = grid_stops and not end.sliver

    def failure(
        diagnosis: str, text: str = message, details: str = "", fill: str = "", way: str = ""
    ) -> DrillFailure:
        facts = {
            **located.facts,
            **_rows_per_program(actual, call),
            **({"fill": fill} if fill else {}),
            **({"way": way} if way else {}),
            **({END_UNWRITTEN: GRID_STOPS if grid_stops else NO_GRID_STOPS} if end else {}),
        }
        return HarnessFailure(
            diagnosis, text, details, where=located.where, error_map=located.picture, facts=facts
        )

    suspect = _uncontested_suspect(got, to_reference, _built(suspects), tol)
    if suspect is not None:
        raise failure(suspect.diagnosis, details=suspect.details_for(english_what), way=suspect.way)
    if unwritten.any() and not (wrong & ~unwritten).any():
        if bool(unwritten.all()) and call.programs == 0:
            raise failure(
                dx.GRID_TOO_SMALL,
                _(
                    "{what} was never written: the kernel was launched with a grid of 0 programs"
                ).format(what=what),
                _(
                    "The grid's size rounded down to nothing for this input (n // BLOCK with n "
                    "smaller than BLOCK is 0): count programs with triton.cdiv, which rounds up."
                ),
                EMPTY,
            )
        if bool(unwritten.all()):
            raise failure(
                dx.OUTPUT_UNTOUCHED,
                _(
                    "{what} was never written: every value still holds what the empty tensor "
                    "was filled with"
                ).format(what=what),
            )
        if grid_claim and end.axis is None:
            raise failure(
                dx.GRID_TOO_SMALL,
                message,
                _(
                    "Everything from index {first} of {total} to the end was never written, and "
                    "everything before it is right: the grid launched too few programs to cover "
                    "the output (the count rounds down, or counts the wrong dimension)."
                ).format(first=end.first, total=unwritten.numel()),
                EMPTY,
            )
        if grid_claim:
            raise failure(
                dx.GRID_TOO_SMALL,
                message,
                _(
                    "Along dimension {axis} (size {size}), everything from index {first} on was "
                    "never written, and everything else is right: the grid launched too few "
                    "programs along that dimension (its count rounds down, or counts the wrong "
                    "dimension)."
                ).format(axis=end.axis, size=unwritten.shape[end.axis], first=end.first),
                EMPTY,
            )
    zeroed = _zero_filled_tail(got, want, wrong)
    if zeroed is not None:
        whole = bool(wrong.all()) or not got.any()
        if not whole or call.programs == 0:
            raise failure(dx.GRID_TOO_SMALL, message, zeroed, ZEROS)
    if fp32_rerun is not None and expected.dtype != torch.float32 and fp32_expected is not None:
        rerun = fp32_rerun()
        if (
            isinstance(rerun, torch.Tensor)
            and _excess(rerun.float(), fp32_expected.float(), tol) <= 1
        ):
            steps = _steps_apart(actual, expected)
            claimed = failure(
                dx.BF16_NO_UPCAST,
                details=_(
                    "The same kernel is right on fp32 inputs: arithmetic on {dtype} values "
                    "needs a .to(tl.float32) after the load."
                ).format(dtype=_name(expected.dtype))
                if steps != 1
                else _(
                    "The same kernel is right on fp32 inputs, and what is left on {dtype} "
                    "inputs is small: {count} values are one {dtype} step off, none more. A "
                    "value is still rounded to {dtype} between two steps: an intermediate "
                    "kept in {dtype}, or a load used before its .to(tl.float32)."
                ).format(dtype=_name(expected.dtype), count=int(wrong.sum())),
            )
            if steps == 1:
                claimed.facts[ONE_STEP] = 1
            note = _backend_note(expected.dtype)
            if note:  # said once for the run, beside its failures (tutor.coach.report)
                claimed.facts[BACKEND_NOTE] = note
            raise claimed
    bad_values = ~torch.isfinite(got) & torch.isfinite(want)
    # The guards around the learner's own copies of the inputs are evidence as the test's are.
    if bad_values.any() and (reads_guarded or call.copied_inputs):
        claimed = failure(
            dx.MISSING_MASK,
            details=_(
                "NaN came in from memory just outside the tensor, which the test fills with "
                "NaN: a tl.load reads past the end of a row or of the tensor ({why})."
            ).format(why=_(LEAKY_MASK)),
        )
        claimed.guard_evidence = bad_values.cpu()  # the drill plugin checks the claim
        raise claimed
    if bad_values.any():
        raise failure(dx.NAN_OR_INF, details=_nan_text(bad_values))
    if untouched is not None and torch.equal(actual, untouched):
        raise failure(
            dx.OUTPUT_UNTOUCHED,
            _("{what} was not written: it still holds its old values").format(what=what),
        )
    # All zeros in memory that began as the sentinel (torch.empty) were written: as zeros.
    if not got.any() and want.any() and not learner.started_as_sentinel(actual):
        raise failure(
            dx.OUTPUT_UNTOUCHED, _("{what} is all zeros: was it written at all?").format(what=what)
        )
    if tail is not None:
        if wrong.any() and not (wrong & ~tail).any():
            raise failure(
                dx.TAIL_WRONG,
                details=_("Only positions in the last, partly filled block are wrong."),
            )
    raise failure(dx.MISMATCH)


def _rows_per_program(out: torch.Tensor, call: learner.CallRecord) -> dict:
    """{"rows_per_program": k} when the call's launches asked for fewer programs than `out` has
    rows (a kernel that takes several rows a program, in a tile or a loop), for the hints."""
    if out.dim() < 2 or not call.programs:
        return {}
    rows = out.numel() // max(out.shape[-1], 1)
    if call.programs >= rows:
        return {}
    return {"rows_per_program": -(-rows // call.programs)}


def _backend_note(dtype: torch.dtype) -> str:
    """Where the verdict depends on the backend by nature, a paragraph that says so."""
    return kernels.current().half_precision_note() if dtype == torch.bfloat16 else ""


def _steps_apart(actual: torch.Tensor, expected: torch.Tensor) -> int | None:
    """The most representable 16-bit steps between `actual` and `expected` (bf16 or fp16, both
    finite), else None."""
    if actual.dtype != expected.dtype or actual.dtype not in (torch.bfloat16, torch.float16):
        return None
    if not (bool(torch.isfinite(actual).all()) and bool(torch.isfinite(expected).all())):
        return None

    def line(t: torch.Tensor) -> torch.Tensor:
        bits = t.detach().contiguous().view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)  # sign-magnitude onto one line

    return int((line(actual) - line(expected)).abs().max())


def _zero_filled_tail(got: torch.Tensor, want: torch.Tensor, wrong: torch.Tensor) -> str | None:
    """Why the output reads as never written into a zero-filled tensor, or None.

    `torch.zeros` output and a grid that rounds down: from a block or row boundary on (the
    whole end in row-major order, or the end of one axis), the output is exactly 0 where the
    reference is not, and everything else is right. A correct kernel whose output is 0 there
    passes before this is asked; here every wrong value must be an exact 0 that the
    reference does not have, inside a stretch of exact zeros that starts on a boundary.
    """
    if not wrong.any() or not bool((got[wrong] == 0).all()):
        return None
    zero = got == 0
    cols = got.shape[-1] if got.dim() else 1
    flat_zero, flat_wrong = zero.reshape(-1), wrong.reshape(-1)
    nonzero = (~flat_zero).nonzero()
    start = int(nonzero[-1]) + 1 if nonzero.numel() else 0  # where the final run of zeros starts
    first = int(flat_wrong.nonzero()[0])
    # The first block boundary (16 values: no block is smaller) or row boundary in that run.
    boundary = min(-(-start // 16) * 16, -(-start // cols) * cols)
    if boundary <= first:
        return _(
            "Everything from index {first} of {total} on reads exactly 0 where the reference "
            "is not, and everything before it is right: that end was never written (it holds "
            "the zeros the tensor was made with). The grid launched too few programs to cover "
            "the output (the count rounds down, or counts the wrong dimension)."
        ).format(first=boundary, total=flat_wrong.numel())
    for axis in range(1, got.dim()):
        size = got.shape[axis]
        along_zero = zero.movedim(axis, 0).reshape(size, -1).all(1)
        along_wrong = wrong.movedim(axis, 0).reshape(size, -1).any(1)
        first = int(along_wrong.int().argmax())
        if first == 0 or not bool(along_zero[first:].all()):
            continue
        if axis == got.dim() - 1 and first % 16:
            continue  # a sliver of the last axis is a mask one lane too strict, not a grid
        return _(
            "Along dimension {axis} (size {size}), everything from index {first} on reads "
            "exactly 0 where the reference is not, and everything else is right: that part was "
            "never written (it holds the zeros the tensor was made with). The grid launched "
            "too few programs along that dimension (its count rounds down, or counts the wrong "
            "dimension)."
        ).format(axis=axis, size=size, first=first)
    return None


def _suffix_starts(first: int, shape: tuple[int, ...] | torch.Size) -> set[int]:
    """Where programs that stop short would have stopped, for an output never written from
    flat index `first` on: that index itself (programs over the flat elements), or the number of
    rows, of any rank, written before it (programs over rows)."""
    starts = {first}
    for axis in range(1, len(shape)):
        row = math.prod(shape[axis:])
        if first % row == 0:
            starts.add(first // row)
    return starts


BLOCKS_PER_PROGRAM = (1, 2, 4, 8)  # a program may walk a few blocks (a static loop, rows)


def _grid_could_stop_at(starts: set[int], call: learner.CallRecord) -> bool:
    """Whether `call`'s launches can have stopped exactly at one of `starts`: some
    count of programs (a grid axis, a product of axes, or a factor of a 1-D grid) times what
    each program covers is one of them, where a program covers 1, 2, 4 or 8 lanes or rows, or
    1, 2, 4 or 8 of one of the launch's power-of-two blocks. A grid that rounds down ends on such a
    product; programs that overlap or a mask one lane short end elsewhere (a right-sized grid
    whose programs all store the first block is not too small). Unknown launches do not count
    against the claim."""
    found = call.launches
    if not found or any(launch.grid is None for launch in found):
        return True
    for launch in found:
        # One lane or row a program, or a few rows (a [2, BLOCK_N] tile, whatever argument
        # says 2): the grid's own axes and their products only. A factor of a 1-D grid stands
        # for tile rows or columns, so it pairs with the launch's blocks.
        direct = _program_counts(launch.grid, factors=False)
        if any(programs * rows in starts for programs in direct for rows in BLOCKS_PER_PROGRAM):
            return True
        covers = {block * r for block in launch.blocks for r in BLOCKS_PER_PROGRAM}
        for programs in _program_counts(launch.grid, factors=True):
            if any(programs * each in starts for each in covers):
                return True
    return False


def _program_counts(grid: tuple[int, ...], factors: bool) -> set[int]:
    """The program counts a grid can stop a tensor axis at: each axis and every product of
    axes, and with `factors`, for a 1-D grid that walks 2-D tiles, every factor of its size."""
    counts = set()
    for chosen in range(1, 1 << len(grid)):
        counts.add(math.prod(size for i, size in enumerate(grid) if chosen >> i & 1))
    if factors and len(grid) == 1:
        counts |= {d for d in range(1, grid[0] + 1) if grid[0] % d == 0}
    return counts


@dataclass(frozen=True)
class UnwrittenEnd:
    """An end of the output that was never written: from flat index `first` on (`axis` None),
    or from index `first` on along `axis`; `starts`, where a grid that stops short would stop."""

    axis: int | None
    first: int
    starts: set[int]
    # along the last axis at a k that is no multiple of 16: a sliver that a mask one lane too
    # strict leaves, which no grid claim rests on (the run's agreement still weighs it)
    sliver: bool = False


def _unwritten_end(wrong: torch.Tensor, unwritten: torch.Tensor) -> UnwrittenEnd | None:
    """When some but not all values were never written, every other value is right, and the
    unwritten ones are an end of the output (a flat suffix, or every index from one on along an
    axis, the patterns a grid that stops short leaves): that end. Else None."""
    if not unwritten.any() or bool(unwritten.all()) or (wrong & ~unwritten).any():
        return None
    if _is_suffix(unwritten):
        first = int(unwritten.reshape(-1).nonzero()[0])
        return UnwrittenEnd(None, first, _suffix_starts(first, unwritten.shape))
    cut = _unlaunched_along_one_axis(unwritten)
    if cut is None:
        return None
    axis, first = cut
    sliver = axis == unwritten.dim() - 1 and first % 16 != 0
    return UnwrittenEnd(axis, first, {first}, sliver)


def _is_suffix(mask: torch.Tensor) -> bool:
    """True when the True positions of `mask` are exactly its last k values, in row-major order."""
    flat = mask.reshape(-1)
    count = int(flat.sum())
    return count > 0 and bool(flat[flat.numel() - count :].all())


def _unlaunched_along_one_axis(mask: torch.Tensor) -> tuple[int, int] | None:
    """(axis, k) when the True positions of `mask` are exactly those whose index along one axis
    is k or more, whatever the other indices: the pattern of a grid axis that stops short (a
    too-small head count leaves the last heads of every token unwritten)."""
    for axis in range(1, mask.dim()):  # axis 0 is the flat suffix, named before this
        size = mask.shape[axis]
        along = mask.movedim(axis, 0).reshape(size, -1)
        whole, empty = along.all(1), ~along.any(1)
        if not bool((whole | empty).all()) or not bool(whole.any()):
            continue
        first = int(whole.int().argmax())
        if first == 0 or not bool(whole[first:].all()):
            continue
        return axis, first
    return None


def _unwritten_edges(out: torch.Tensor) -> tuple[int, int] | None:
    """(first never-written row, first never-written column) of a 2-D `out` whose never-written
    part is exactly its last rows and/or columns (the shape's size where none); else None."""
    unwritten = never_written(out.detach())
    if out.dim() != 2 or not unwritten.any() or unwritten.all():
        return None
    full_rows, full_cols = unwritten.all(dim=1), unwritten.all(dim=0)
    rows_from = int(full_rows.size(0) - full_rows.flip(0).int().cumprod(0).sum())
    cols_from = int(full_cols.size(0) - full_cols.flip(0).int().cumprod(0).sum())
    edge = torch.zeros_like(unwritten)
    edge[rows_from:, :] = True
    edge[:, cols_from:] = True
    return (rows_from, cols_from) if torch.equal(unwritten, edge) else None


def unwritten_edge(out: torch.Tensor) -> str | None:
    """How the never-written part of a 2-D `out` looks when it is its last rows or columns
    ("rows 96-99", "rows 96-99 and columns 40-47"); None when it is anything else.

    A 2-D grid that rounds a tile count down leaves whole rows at the bottom and/or whole
    columns at the right of the output never written, and everything else right.
    """
    edges = _unwritten_edges(out)
    if edges is None:
        return None
    rows_from, cols_from = edges
    rows = {"r0": rows_from, "r1": out.shape[0] - 1}
    cols = {"c0": cols_from, "c1": out.shape[1] - 1}
    if rows_from < out.shape[0] and cols_from < out.shape[1]:
        return _("rows {r0}-{r1} and columns {c0}-{c1}").format(**rows, **cols)
    if rows_from < out.shape[0]:
        return _("rows {r0}-{r1}").format(**rows)
    return _("columns {c0}-{c1}").format(**cols)


def raise_if_edges_unwritten(
    failure: DrillFailure, out: object, want: torch.Tensor, tol: Tolerance, what: str
) -> None:
    """Raise `failure` renamed grid-too-small when it is a 2-D output whose last tile rows or
    columns were never written while the rest is right (a tiled grid that rounds down)."""
    if failure.diagnosis not in (dx.OUTPUT_UNTOUCHED, dx.MISMATCH):
        return
    if not isinstance(out, torch.Tensor) or out.shape != want.shape:
        return
    edge = unwritten_edge(out)
    if edge is None:
        return
    written = ~never_written(out.detach())
    close = torch.isclose(out.float(), want.float(), atol=tol.atol, rtol=tol.rtol)
    if not bool(close[written].all()):
        return
    starts = _unwritten_edges(out)  # not None: unwritten_edge found the edge above
    cut = [start for start, size in zip(starts, out.shape, strict=True) if start < size]
    call = learner.call_behind(out)
    if not all(_grid_could_stop_at({start}, call) for start in cut):
        return
    raise failure.renamed(
        dx.GRID_TOO_SMALL,
        _(
            "{what}'s {edge} were never written, and the rest is right: the grid has too few "
            "programs for the last tiles (a count that rounds down: use triton.cdiv)."
        ).format(what=story_text.text(what), edge=edge),
        harness=True,
    ) from None


def expect_unchanged(after: torch.Tensor, before: torch.Tensor, *, what: str) -> None:
    """Guard memory around a tensor must be as the test left it: else a store had no mask."""
    if torch.equal(after.isnan(), before.isnan()) and torch.equal(
        torch.nan_to_num(after), torch.nan_to_num(before)
    ):
        return
    changed = int((torch.nan_to_num(after) != torch.nan_to_num(before)).sum())
    raise HarnessFailure(
        dx.MISSING_MASK,
        ngettext(
            "{count} element of memory just outside {what} was overwritten",
            "{count} elements of memory just outside {what} were overwritten",
            changed,
        ).format(count=changed, what=story_text.text(what)),
        _("A tl.store writes past the end of a row or of the tensor ({why}).").format(
            why=_(LEAKY_MASK)
        ),
    )


def describe_mismatch(got: torch.Tensor, want: torch.Tensor, tol: Tolerance, what: str) -> str:
    """One line: how many elements differ, the worst one, its index and the allowed error."""
    wrong = ~_close_mask(got, want, tol)
    total = want.numel()
    err = (got - want).abs().nan_to_num(nan=float("inf"))
    if want.dim() == 0:
        g, w = got.item(), want.item()
        digits = _digits_apart(g, w)
        return _(
            "{what} is one value: got {got}, expected {want} (|diff| {diff}, allowed {allowed})"
        ).format(
            what=what,
            got=f"{g:.{digits}g}",
            want=f"{w:.{digits}g}",
            diff=f"{abs(g - w):.3g}",
            allowed=f"{tol.atol + tol.rtol * abs(w):.3g}",
        )
    flat = int(torch.argmax(torch.where(wrong, err, torch.zeros_like(err))).item())
    index = list(torch.unravel_index(torch.tensor(flat), want.shape))
    at = "[" + ", ".join(str(int(i)) for i in index) + "]"
    g, w = got.reshape(-1)[flat].item(), want.reshape(-1)[flat].item()
    allowed = tol.atol + tol.rtol * abs(w)
    count = int(wrong.sum())
    digits = _digits_apart(g, w)
    return _(
        "{what}: {count} of {total} values differ ({share}%); worst at {at}: got {got}, "
        "expected {want} (|diff| {diff}, allowed {allowed})"
    ).format(
        what=what,
        count=count,
        total=total,
        share=mapwords.share(count, total),
        at=at,
        got=f"{g:.{digits}g}",
        want=f"{w:.{digits}g}",
        diff=f"{abs(g - w):.3g}",
        allowed=f"{allowed:.3g}",
    )


def _digits_apart(got: float, want: float) -> int:
    """Significant digits that show `got` and `want` apart: 6, or as many more (up to 9, a
    float32's worth) as a tight tolerance needs ("got 1.20903, expected 1.20903" tells the
    learner nothing)."""
    for digits in range(6, 10):
        if f"{got:.{digits}g}" != f"{want:.{digits}g}":
            return digits
    return 9


def _close_mask(got: torch.Tensor, want: torch.Tensor, tol: Tolerance) -> torch.Tensor:
    return torch.isclose(got, want, atol=tol.atol, rtol=tol.rtol, equal_nan=True)


def where_wrong(actual: torch.Tensor, expected: torch.Tensor, tol: Tolerance) -> dict:
    """`where` and `error_map` for a DrillFailure a test raises itself after comparing values:

        raise HarnessFailure(diagnosis, message, details, **where_wrong(out, want, tol))

    the same sentence, picture and facts `expect_close` attaches to its own failures.
    """
    located = _located(actual, expected, tol)[2]
    return {"where": located.where, "error_map": located.picture, "facts": located.facts}


def _located(actual: torch.Tensor, expected: torch.Tensor, tol: Tolerance):
    """(wrong, never written, the error map): where `actual` is out of `tol` of `expected`."""
    got, want = actual.detach().float(), expected.detach().float()
    wrong = ~_close_mask(got, want, tol)
    unwritten = never_written(actual.detach()) & ~never_written(expected.detach()) & wrong
    return wrong, unwritten, errormap.locate(wrong, got, want, unwritten)


def _excess(got: torch.Tensor, want: torch.Tensor, tol: Tolerance) -> float:
    """The worst error as a multiple of what is allowed (<= 1 passes); inf for NaN mismatches."""
    if got.numel() == 0:
        return 0.0
    if bool(torch.isfinite(got).all()) and bool(torch.isfinite(want).all()):
        # The usual case, met once per suspect tried: no masked copies needed.
        err, allowed = (got - want).abs(), tol.atol + tol.rtol * want.abs()
    else:
        if not torch.equal(got.isnan(), want.isnan()):
            return float("inf")
        finite = torch.isfinite(want) & torch.isfinite(got)
        if not torch.equal(got[~finite].nan_to_num(), want[~finite].nan_to_num()):
            return float("inf")
        if not finite.any():
            return 0.0
        err = (got[finite] - want[finite]).abs()
        allowed = tol.atol + tol.rtol * want[finite].abs()
    # An exact comparison (atol = rtol = 0) allows nothing: equal values pass, others fail.
    ratio = torch.where(err == 0, torch.zeros_like(err), err / allowed)
    return float(ratio.max())


def _uncontested_suspect(
    got: torch.Tensor, to_reference: float, suspects: Sequence[Suspect], tol: Tolerance
) -> Suspect | None:
    """The suspect that explains the output best (the first listed among equals), unless one
    of another diagnosis explains it about as well (the best is not 4 times closer): an output
    two mistakes would both give is no evidence for either, and the run's other tests tell
    them apart (b1's dot divided by N gives dot-missing's y * dy on long rows, not on short).

    A suspect explains the output when it fits it (within twice the tolerance) and fits it
    clearly better than the reference does (`to_reference`, the output's excess over it, is 4
    times the suspect's or more)."""
    fits = []
    for suspect in suspects:
        value = suspect.value.detach().float()
        if value.shape != got.shape:
            continue
        to_suspect = _excess(got, value, tol)
        if to_suspect <= 2.0 and to_suspect * 4 <= to_reference:
            fits.append((to_suspect, len(fits), suspect))
    if not fits:
        return None
    best_excess, _order, best = min(fits, key=lambda fit: fit[:2])
    for excess, _order, other in fits:
        if other.diagnosis != best.diagnosis and excess <= 4 * best_excess:
            return None
    return best


def _nan_text(mask: torch.Tensor) -> str:
    count = int(mask.sum())
    return _("{count} of {total} values are NaN or inf where the reference is finite.").format(
        count=count, total=mask.numel()
    )


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")
