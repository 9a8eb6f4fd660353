"""Line breaks in the app for Chinese as for English: anywhere between two Chinese characters,
never before closing punctuation nor after opening punctuation.

Rich, which lays out every paragraph the app shows (Markdown, the run and hint panels), breaks
lines only at spaces: a run of Chinese between two spaces is one word to it, moved whole to the
next line when it does not fit, and lines end half empty. `install` gives Rich's word finder a
pattern in which each Chinese character is a word of its own, with the punctuation it carries
(a closing mark goes with the character before it, an opening mark with the one after), and
everything else as before: a run of letters, digits and their joiners (2026-12-05, x.shape[0])
is still one word. The CLI breaks its lines by the same rules (tutor.lang.cells.wrap).
"""

from __future__ import annotations

import re

import rich._wrap

# Wide characters: CJK punctuation, kana, ideographs and full-width forms (U+3000, the
# ideographic space, is a space).
_WIDE = "\u2e80-\u2fff\u3001-\u303f\u3040-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
_CLOSING = "，。；：、）」』】》〉！？％…"
_OPENING = "（「『【《〈“‘"

# Rich's own is \s*\S+\s*: a word is what lies between spaces.
WORD = re.compile(rf"\s*[{_OPENING}]*(?:[^\s{_WIDE}]+|[{_WIDE}])[{_CLOSING}]*\s*")


def install() -> None:
    """Make Rich break lines between Chinese characters, in this process."""
    rich._wrap.re_word = WORD
