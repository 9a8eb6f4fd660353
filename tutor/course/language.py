"""The learner's language choice, kept in `.tutor/language` for the next start.

The app writes it when the learner switches (tutor.ui), and the command line reads it too, so
`tutor hint` speaks as the app did (tutor.lang.i18n.choose says where it stands among the other
ways of choosing). The file is read like every state file (tutor.course.files.read_regular: a
FIFO or a link to /dev/zero there is no choice, and never a hang) and written like progress, whole
or not at all; a file that says nothing the tutor speaks is no choice either.
"""

from __future__ import annotations

from pathlib import Path

from tutor.course.files import read_regular, write_atomic
from tutor.lang.i18n import LANGUAGES, LanguageError

REMEMBERED = "language"  # the file under .tutor/ that keeps the app's choice


def remembered(state_dir: Path) -> str | None:
    """The language remembered in `state_dir`, or None (none, or not readable)."""
    try:
        value = read_regular(state_dir / REMEMBERED).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value if value in LANGUAGES else None


def remember(state_dir: Path, lang: str) -> None:
    """Keep `lang` in `state_dir` for the next start (the caller checks for links first)."""
    if lang not in LANGUAGES:
        raise LanguageError(f"language {lang!r} is not a language the tutor speaks (en, zh)")
    state_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(state_dir / REMEMBERED, f"{lang}\n".encode())
