"""A terminal that cannot print UTF-8 gets what it can print, never a traceback.

Under `LC_ALL=C` (with Python's UTF-8 mode and locale coercion off) or `PYTHONIOENCODING=ascii`,
Python's stdout is ASCII and the first "—" the tutor prints raises UnicodeEncodeError.
`print_what_it_can` makes stdout and stderr write the symbols the tutor uses in plain ASCII
instead ("—" as "-", "✓" as "+"), any other character the terminal lacks (Chinese on an ASCII
terminal) as "?", and the bytes of a file name that was not UTF-8 as they were. The command line
calls it once, before it prints anything; where the terminal speaks UTF-8 nothing changes.
"""

from __future__ import annotations

import codecs
import io
import sys

ERRORS = "tutor-fallback"
# The symbols the tutor's own text uses, each as the ASCII a reader takes for it.
ASCII_FALLBACKS = {
    "—": "-",
    "–": "-",
    "…": "...",
    "✓": "+",
    "✗": "x",
    "★": "*",
    "○": "o",
    "●": "*",
    "·": "-",
    "µ": "u",
    "×": "x",
    "→": "->",
    "←": "<-",
    "≈": "~",
    "≤": "<=",
    "≥": ">=",
    "²": "^2",
    "“": '"',
    "”": '"',
    "‘": "'",
    "’": "'",
    # Chinese punctuation, so ids and numbers in a Chinese sentence still read: "（t3）"
    "（": "(",
    "）": ")",
    "：": ":",
    "，": ",",
    "、": ",",
    "；": ";",
    "。": ".",
    "？": "?",
    "！": "!",
}


def _fallback(error: UnicodeError) -> tuple[str | bytes, int]:
    """The codec error handler: one character the stream cannot encode, replaced."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    char = error.object[error.start]
    if "\udc80" <= char <= "\udcff":  # a byte that was not UTF-8, kept by surrogateescape
        return bytes([ord(char) - 0xDC00]), error.start + 1
    return ASCII_FALLBACKS.get(char, "?"), error.start + 1


codecs.register_error(ERRORS, _fallback)


def print_what_it_can() -> None:
    """Make stdout and stderr replace what their encoding cannot write, instead of raising."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and codecs.lookup(stream.encoding).name != (
            "utf-8"
        ):
            stream.reconfigure(errors=ERRORS)
