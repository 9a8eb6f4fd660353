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


def rjust(text: str, cells: int) -> str:
    return " " * max(0, cells - width(text)) + text


def _pieces(text: str) -> list[str]:
    """Words, single wide characters (a line may break before any of them) and spaces."""
    pieces: list[str] = []
    for char in text:
        wide = unicodedata.east_asian_width(char) in "WF"
        if char.isspace():
            pieces.append(" ")
        elif wide or not pieces or pieces[-1] == " " or width(pieces[-1][-1]) == 2:
            pieces.append(char)
        else:
            pieces[-1] += char
    return pieces


_NO_LINE_START = set("，。；：、）」』！？%,.;:)]}")  # punctuation stays with what it follows


def wrap(text: str, cells: int, indent: str = "") -> list[str]:
    """`text` in lines of at most `cells` cells (each starting with `indent`), broken at spaces
    and between wide characters, as textwrap.wrap breaks at spaces alone. A word longer than a
    line gets a line of its own."""
    room = max(1, cells - width(indent))
    lines: list[str] = []
    line: list[str] = []
    for piece in _pieces(" ".join(text.split())):
        if piece == " " and not line:
            continue
        if not line or width("".join(line)) + width(piece) <= room:
            line.append(piece)
            continue
        carried = [line.pop()] if piece in _NO_LINE_START and len(line) > 1 else []
        lines.append("".join(line).rstrip())
        line = [] if piece == " " else [*carried, piece]
    if "".join(line).strip():
        lines.append("".join(line).rstrip())
    return [indent + one for one in lines]
