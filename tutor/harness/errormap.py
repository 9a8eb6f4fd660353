"""Where an output is wrong: one sentence, and a small picture of rows x column blocks.

A failed value comparison says more than "the values are wrong": which rows, which columns,
the first and last wrong index, and the pattern when one fits (never written, only the end,
whole rows, each row off by one factor, NaN), with its numbers as `facts` for the hint texts.
The picture folds the output into at most
`MAX_ROWS` x `MAX_COLS` cells, the last dimension across:

    rows 0-7 x columns 0-999, a cell is 1 row x 16 columns
    ...............................................______________
    ...

    .  right    X  wrong    N  NaN or inf    _  never written (still holds the fill value)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from tutor.lang import mapwords
from tutor.lang.i18n import _, ngettext
from tutor.lang.mapwords import NAN, RIGHT, UNWRITTEN, WRONG
from tutor.states import WrongPattern

MAX_ROWS = 16
MAX_COLS = 64


@dataclass(frozen=True)
class ErrorMap:
    where: str  # one sentence
    picture: tuple[str, ...]  # the text lines of the map, legend last
    # The numbers behind the sentence, for hint texts ("6 of 1200 values"): wrong, total,
    # rows, wrong_rows, first and last (index text), pattern (a WrongPattern or ""), and
    # factor ("x0.5") when each wrong row is off by one factor; columns and flat (a 1-D output),
    # for redrawing the picture's heading at another width (tutor.lang.mapwords).
    facts: dict = field(default_factory=dict)


def locate(
    wrong: torch.Tensor,
    got: torch.Tensor | None = None,
    want: torch.Tensor | None = None,
    unwritten: torch.Tensor | None = None,
) -> ErrorMap:
    """Describe the bool mask `wrong` (True where the output is wrong) over the output's shape.

    `got` and `want` (same shape) let it see NaN and per-row factors; `unwritten` marks the
    positions that still hold the fill value of a never-written buffer.
    """
    shape = tuple(wrong.shape)
    if not shape:
        # One value: the comparison's message says it all (got, expected); no map to draw.
        return ErrorMap("", (), {"wrong": int(wrong), "total": 1} if bool(wrong) else {})
    rows, cols = _as_rows(shape)
    wrong2 = wrong.reshape(rows, cols).cpu()
    nan2 = torch.zeros_like(wrong2)
    if got is not None:
        nan2 = (~torch.isfinite(got.float())).reshape(rows, cols).cpu() & wrong2
    unwritten2 = torch.zeros_like(wrong2)
    if unwritten is not None:
        unwritten2 = unwritten.reshape(rows, cols).cpu() & wrong2
    sentence = _sentence(shape, wrong2, nan2, unwritten2, got, want)
    facts = _facts(shape, wrong2, nan2, got, want)
    return ErrorMap(sentence, _picture(rows, cols, shape, wrong2, nan2, unwritten2), facts)


def _facts(shape, wrong2, nan2, got, want) -> dict:
    count = int(wrong2.sum())
    if count == 0:
        return {}
    rows = wrong2.shape[0]
    flat = wrong2.reshape(-1).nonzero().reshape(-1)
    wrong_rows = wrong2.any(dim=1).nonzero().reshape(-1).tolist()
    facts = {
        "wrong": count,
        "nonfinite": int(nan2.sum()),  # of the wrong values, those that are NaN or inf
        "total": wrong2.numel(),
        "rows": rows,
        "wrong_rows": len(wrong_rows),
        "first": _index(shape, int(flat[0])),
        "last": _index(shape, int(flat[-1])),
        "columns": wrong2.shape[1],
        "flat": len(shape) <= 1,
    }
    factors = _row_factors(wrong2, wrong_rows, got, want)
    if factors:
        facts["factor"] = _factor_text(factors)
    facts["pattern"] = _pattern(wrong2, nan2, wrong_rows, bool(factors))
    return facts


def _pattern(wrong2, nan2, wrong_rows, factor: bool) -> str:
    """The first WrongPattern that describes `wrong2` (rows x columns), in the order below,
    or "" when none does (wrong here and there)."""
    rows = wrong2.shape[0]
    flat = wrong2.reshape(-1)
    first = int(flat.nonzero()[0])
    # Only the end: everything from the first wrong value on is wrong (a contiguous tail), or
    # every row is wrong from one column on and right before it. A right value inside the
    # stretch is no end stopping short.
    if first > 0 and bool(flat[first:].all()):
        return WrongPattern.END.value
    first_col = int(wrong2.any(dim=0).nonzero()[0])
    if rows > 1 and first_col > 0 and bool(wrong2[:, first_col:].all()):
        return WrongPattern.END.value
    if 2 * int(nan2.sum()) >= int(wrong2.sum()):
        return WrongPattern.NAN_ROWS.value
    if factor:
        return WrongPattern.FACTOR.value
    if rows > 1 and len(wrong_rows) < rows and bool(wrong2[wrong_rows].all()):
        return WrongPattern.ROWS.value
    return ""


def _as_rows(shape: tuple[int, ...]) -> tuple[int, int]:
    if not shape:
        return 1, 1
    cols = shape[-1]
    rows = 1
    for dim in shape[:-1]:
        rows *= dim
    return rows, max(cols, 1)


def _span(first: int, last: int) -> str:
    return f"{first}" if first == last else f"{first}-{last}"


def _index(shape: tuple[int, ...], flat: int) -> str:
    if len(shape) <= 1:
        return str(flat)
    parts = []
    for dim in reversed(shape):
        parts.append(flat % dim)
        flat //= dim
    return "[" + ", ".join(str(p) for p in reversed(parts)) + "]"


def _sentence(shape, wrong2, nan2, unwritten2, got, want) -> str:
    rows, cols = wrong2.shape
    count, total = int(wrong2.sum()), wrong2.numel()
    if count == 0:
        return _("no value is wrong")
    flat = wrong2.reshape(-1).nonzero().reshape(-1)
    first, last = int(flat[0]), int(flat[-1])
    head = _("{count} of {total} values are wrong ({share}%)").format(
        count=count, total=total, share=mapwords.share(count, total)
    )
    wrong_rows = wrong2.any(dim=1).nonzero().reshape(-1).tolist()
    wrong_cols = wrong2.any(dim=0).nonzero().reshape(-1).tolist()
    if rows == 1:
        where = (
            _("indices {span}").format(span=_span(first, last))
            if first != last
            else _("index {at}").format(at=first)
        )
        if last == total - 1 and count == total - first and first > 0:
            where += _(" (everything from there to the end)")
    else:
        row_text = (
            _("every row")
            if len(wrong_rows) == rows
            else _("rows {rows} of {total}").format(rows=_rows_text(wrong_rows), total=rows)
        )
        col_text = (
            _("every column")
            if len(wrong_cols) == cols
            else _("columns {span} of {total}").format(
                span=_span(wrong_cols[0], wrong_cols[-1]), total=cols
            )
        )
        ends = _("first at {first}, last at {last}").format(
            first=_index(shape, first), last=_index(shape, last)
        )
        where = _("{rows}, {columns}; {ends}").format(rows=row_text, columns=col_text, ends=ends)
    patterns = _patterns(wrong2, nan2, unwritten2, wrong_rows, got, want)
    if patterns:
        return _("{head}: {where}; {patterns}.").format(head=head, where=where, patterns=patterns)
    return _("{head}: {where}.").format(head=head, where=where)


def _rows_text(rows: list[int]) -> str:
    """`0-3, 7` for [0, 1, 2, 3, 7]; long lists are cut short."""
    runs: list[tuple[int, int]] = []
    for r in rows:
        if runs and r == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], r)
        else:
            runs.append((r, r))
    text = ", ".join(_span(a, b) for a, b in runs[:6])
    return text + (", ..." if len(runs) > 6 else "")


def _patterns(wrong2, nan2, unwritten2, wrong_rows, got, want) -> str:
    count = int(wrong2.sum())
    found = []
    if int(unwritten2.sum()) == count:
        found.append(_("none of them was ever written (they still hold the fill value)"))
    elif unwritten2.any():
        unwritten = int(unwritten2.sum())
        found.append(
            ngettext(
                "{count} of them was never written", "{count} of them were never written", unwritten
            ).format(count=unwritten)
        )
    if int(nan2.sum()) == count:
        found.append(_("all of them are NaN or inf"))
    elif nan2.any():
        nans = int(nan2.sum())
        found.append(
            ngettext(
                "{count} of them is NaN or inf", "{count} of them are NaN or inf", nans
            ).format(count=nans)
        )
    rows = wrong2.shape[0]
    if rows > 1 and wrong_rows and len(wrong_rows) < rows and bool(wrong2[wrong_rows].all()):
        found.append(_("those rows are wrong in every column and the other rows are right"))
    factors = _row_factors(wrong2, wrong_rows, got, want)
    if factors:
        found.append(
            _("each wrong row is off by one factor ({factors})").format(
                factors=_factor_text(factors)
            )
        )
    return _("; ").join(found)


def _factor_text(factors: list[float]) -> str:
    """`x0.5, x2, x3, ...`: the first three factors."""
    shown = ", ".join(f"x{m:.4g}" for m in factors[:3])
    return shown + (", ..." if len(factors) > 3 else "")


def _row_factors(wrong2, wrong_rows, got, want) -> list[float]:
    """got / want of each wrong row, when it is constant along every such row; else []."""
    if got is None or want is None or not wrong_rows:
        return []
    rows, cols = wrong2.shape
    if cols < 4:
        return []
    g = got.double().reshape(rows, cols)[wrong_rows].cpu()
    w = want.double().reshape(rows, cols)[wrong_rows].cpu()
    usable = torch.isfinite(g) & torch.isfinite(w) & (w.abs() > 1e-6)
    if not usable.all(dim=1).any():
        return []
    ratio = torch.where(usable, g / torch.where(usable, w, torch.ones_like(w)), torch.nan)
    spread = (ratio - ratio.nanmean(dim=1, keepdim=True)).abs().nan_to_num(0).amax(dim=1)
    means = ratio.nanmean(dim=1)
    if bool((spread <= 1e-2 * means.abs()).all()) and bool(((means - 1).abs() > 1e-2).all()):
        return [float(m) for m in means]
    return []


def _picture(rows, cols, shape, wrong2, nan2, unwritten2) -> tuple[str, ...]:
    cell_rows = min(rows, MAX_ROWS)
    cell_cols = min(cols, MAX_COLS)
    row_edges = [round(i * rows / cell_rows) for i in range(cell_rows + 1)]
    col_edges = [round(j * cols / cell_cols) for j in range(cell_cols + 1)]
    lines = []
    for i in range(cell_rows):
        r0, r1 = row_edges[i], row_edges[i + 1]
        chars = []
        for j in range(cell_cols):
            c0, c1 = col_edges[j], col_edges[j + 1]
            if nan2[r0:r1, c0:c1].any():
                chars.append(NAN)
            elif unwritten2[r0:r1, c0:c1].any():
                chars.append(UNWRITTEN)
            elif wrong2[r0:r1, c0:c1].any():
                chars.append(WRONG)
            else:
                chars.append(RIGHT)
        lines.append("".join(chars))
    per_row = mapwords.per_cell(rows, cell_rows)
    per_col = mapwords.per_cell(cols, cell_cols)
    title = mapwords.heading(len(shape) <= 1, rows, cols, per_row, per_col)
    return (title, *lines, mapwords.legend())
