"""A read-only, syntax-highlighted view of a Python file, reloaded from disk on request."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea


def _python_language() -> str | None:
    """ "python" when tree-sitter's Python grammar is installed; plain text otherwise."""
    try:
        import tree_sitter  # noqa: F401
        import tree_sitter_python  # noqa: F401
    except ImportError:
        return None
    return "python"


class CodeView(TextArea):
    """Shows one file; `reload` keeps the cursor and scroll where they were."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(
            "",
            language=_python_language(),
            read_only=True,
            show_line_numbers=True,
            soft_wrap=False,
            tab_behavior="focus",
            id=id,
            classes=classes,
        )
        self.path: Path | None = None

    def show_file(self, path: Path | None, missing: str = "") -> None:
        """Show `path` from its top, or `missing` when there is no such file."""
        self.path = path
        self.load_text(self._read(missing))

    def reload(self) -> None:
        """Read the file again (it changed on disk) without moving the learner's place."""
        text = self._read(self.text)
        if text == self.text:
            return
        cursor, scroll = self.cursor_location, self.scroll_offset
        self.load_text(text)
        last_row = self.document.line_count - 1
        self.cursor_location = (min(cursor[0], last_row), 0)
        self.scroll_to(scroll.x, scroll.y, animate=False)

    def _read(self, fallback: str) -> str:
        if self.path is None:
            return fallback
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return fallback
