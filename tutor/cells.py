"""How wide text is on a terminal: a CJK character takes two cells, so columns of Chinese
titles line up only when padded by cells, not by characters."""

from __future__ import annotations

import unicodedata


def width(text: str) -> int:
    """The cells `text` takes on a terminal (wide and full-width characters count two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def ljust(text: str, cells: int) -> str:
    """`text` padded with spaces to `cells` cells (as str.ljust does by characters)."""
    return text + " " * max(0, cells - width(text))
