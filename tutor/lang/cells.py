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


# Line-breaking rules (as Chinese typesetting has them): closing punctuation never starts a
# line, it stays with what it follows; opening punctuation never ends one, it goes with what it
# opens. A run of letters, digits and their joiners (2026-12-05, x.shape[0], 1e-5) is one piece.
_NO_LINE_START = set("，。；：、）」』】》〉！？％…,.;:!?%)]}”’")
_NO_LINE_END = set("（「『【《〈([{“‘")


def join_lines(lines: list[str]) -> str:
    """The lines of one paragraph as one line of text: joined with a space, except between two
    wide characters (a line break inside Chinese is no space)."""
    text = ""
    for line in (one.strip() for one in lines):
        if not line:
            continue
        wide = text and width(text[-1]) == 2 and width(line[0]) == 2
        text += line if not text or wide else " " + line
    return text


def wrap(text: str, cells: int, indent: str = "") -> list[str]:
    """`text` in lines of at most `cells` cells (each starting with `indent`), broken at spaces
    and between wide characters, as textwrap.wrap breaks at spaces alone, never before closing
    punctuation nor after opening punctuation. A word longer than a line gets a line of its
    own."""
    room = max(1, cells - width(indent))
    lines: list[str] = []
    line: list[str] = []
    for piece in _pieces(" ".join(text.split())):
        if piece == " " and not line:
            continue
        if not line or width("".join(line)) + width(piece) <= room:
            line.append(piece)
            continue
        carried = _carried(line, piece)
        lines.append("".join(line).rstrip())
        line = [] if piece == " " and not carried else [*carried, piece]
    if "".join(line).strip():
        lines.append("".join(line).rstrip())
    return [indent + one for one in lines]


def _carried(line: list[str], piece: str) -> list[str]:
    """The pieces at the end of a full `line` that go to the next line with `piece`, taken off
    `line`: when `piece` is closing punctuation, the closing punctuation before it and the
    piece they all follow; and any opening punctuation the line ends with. None when `line`
    would be left empty (the break then stays where it is)."""
    take = 0
    if piece in _NO_LINE_START:
        while take < len(line) and line[-1 - take] in _NO_LINE_START | {" "}:
            take += 1
        take += 1  # the piece the punctuation follows
    while take < len(line) and line[-1 - take] in _NO_LINE_END:
        take += 1
    if take == 0 or take >= len(line):
        return []
    carried = line[-take:]
    del line[-take:]
    while carried and carried[0] == " ":
        carried.pop(0)
    return carried
