"""The words of an error map (tutor.harness.errormap): its heading and legend, made from
numbers in the chosen language. Torch-free, so the CLI and the app can say again how many
columns a cell covers once they have narrowed a picture to their width (report.fit_error_map).
"""

from __future__ import annotations

from tutor.lang.i18n import _, ngettext

RIGHT, WRONG, NAN, UNWRITTEN = ".", "X", "N", "_"


def share(count: int, total: int) -> str:
    """`count` of `total` as a percentage to one decimal, never rounded to read as none or as
    all: "<0.1" for 4 of 10 000, ">99.9" for 9 999 of 10 000."""
    percent = 100 * count / total if total else 0.0
    if 0 < count and percent < 0.05:
        return "<0.1"
    if count < total and percent >= 99.95:
        return ">99.9"
    return f"{percent:.1f}"


def per_cell(count: int, cells: int) -> str:
    """How many of `count` rows or columns one of `cells` cells covers: "16", or "15+"."""
    return f"{count // cells}" + ("+" if count % cells else "")


def heading(flat: bool, rows: int, cols: int, per_row: str, per_col: str) -> str:
    """`indices 0-999, a cell is 16+ values`, or `rows 0-7 x columns 0-999, a cell is 1 row x
    16+ columns`; `flat` for a 1-D output."""
    plural = 1 if per_col == "1" else 2  # "16+" reads as many
    if flat or rows == 1:
        span = (
            _("indices 0-{last}").format(last=cols - 1)
            if flat
            else _("rows 0-0 x columns 0-{last}").format(last=cols - 1)
        )
        cell = ngettext("a cell is {n} value", "a cell is {n} values", plural).format(n=per_col)
        return _("{span}, {cell}").format(span=span, cell=cell)
    span = _("rows 0-{last_row} x columns 0-{last}").format(last_row=rows - 1, last=cols - 1)
    cell = _("a cell is {rows} x {columns}").format(
        rows=ngettext("{n} row", "{n} rows", 1 if per_row == "1" else 2).format(n=per_row),
        columns=ngettext("{n} column", "{n} columns", plural).format(n=per_col),
    )
    return _("{span}, {cell}").format(span=span, cell=cell)


def legend() -> str:
    return _("{right} right  {wrong} wrong  {nan} NaN or inf  {unwritten} never written").format(
        right=RIGHT, wrong=WRONG, nan=NAN, unwritten=UNWRITTEN
    )
