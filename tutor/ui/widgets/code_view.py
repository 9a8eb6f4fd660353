"""A read-only, syntax-highlighted view of a learner's file (Python, or CUDA C++), reloaded from
disk on request.

Highlighting costs time that grows with the file (1.3 s at 1,000 lines, 12 s at 3,000 were
measured), and a learner file can be anything: past `HIGHLIGHT_MAX_LINES` the view shows plain
text, and past `SHOW_MAX_BYTES` only the start of the file, each time saying why in its first
line. The file itself is never changed.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea

HIGHLIGHT_MAX_LINES = 800  # kernels are a few hundred lines; past this, plain text
SHOW_MAX_BYTES = 200_000  # past this, only the first part is shown


def _python_language() -> str | None:
    """ "python" when tree-sitter's Python grammar is installed; plain text otherwise."""
    try:
        import tree_sitter  # noqa: F401
        import tree_sitter_python  # noqa: F401
    except ImportError:
        return None
    return "python"


def _syntax_of(path: Path | None) -> str:
    """The highlighting a file's kernel language asks for, by its suffix (python by default)."""
    from tutor import kernels
    from tutor.course.catalogue import KERNEL_LANGUAGES

    for name, suffix in KERNEL_LANGUAGES.items():
        if path is not None and path.suffix == suffix:
            return kernels.language(name).syntax
    return "python"


def _cpp_grammar() -> tuple[object, str] | None:
    """tree-sitter's C++ grammar and its highlights (C's, which C++ extends, then C++'s own),
    when both are installed."""
    try:
        import tree_sitter_c
        import tree_sitter_cpp
        from tree_sitter import Language
    except ImportError:
        return None
    query = tree_sitter_c.HIGHLIGHTS_QUERY + "\n" + tree_sitter_cpp.HIGHLIGHTS_QUERY
    return Language(tree_sitter_cpp.language()), query


class CodeView(TextArea):
    """Shows one file; `reload` keeps the cursor and scroll where they were."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(
            "",
            language=_python_language(),
            read_only=True,
            show_line_numbers=True,
            soft_wrap=True,  # a read-only view: every line whole, at any width
            tab_behavior="focus",
            id=id,
            classes=classes,
        )
        self.path: Path | None = None
        self.note = ""  # what the file shown is, when it is not the learner's own
        self.syntax = "python"
        grammar = _cpp_grammar()
        if grammar is not None:
            self.register_language("cpp", *grammar)
        self._stamp: tuple[int, int] | None = None  # the file's (mtime, size) when last read

    def show_file(self, path: Path | None, missing: str = "", *, note: str = "") -> None:
        """Show `path` from its top, or `missing` when there is no such file; `note` says in
        the first line what the file is, when it is not the learner's own."""
        self.path = path
        self.note = note
        self.syntax = _syntax_of(path)
        self._load(self._read(missing))

    def _load(self, text: str) -> None:
        """Load `text`, plain when it is too long to highlight quickly."""
        too_long = text.count("\n") > HIGHLIGHT_MAX_LINES
        if too_long:
            self.language = None
        elif self.syntax == "python":
            self.language = _python_language()
        else:
            self.language = self.syntax if self.syntax in self.available_languages else None
        self.load_text(text)

    def reload(self) -> None:
        """Read the file again (it changed on disk) without moving the learner's place."""
        text = self._read(self.text)
        if text == self.text:
            return
        cursor, scroll = self.cursor_location, self.scroll_offset
        self._load(text)
        last_row = self.document.line_count - 1
        self.cursor_location = (min(cursor[0], last_row), 0)
        self.scroll_to(scroll.x, scroll.y, animate=False)

    def changed_on_disk(self) -> bool:
        """Whether the file shown was written since it was last read (an editor saved it)."""
        return self.path is not None and _stamp(self.path) != self._stamp

    def _read(self, fallback: str) -> str:
        if self.path is None:
            return fallback
        self._stamp = _stamp(self.path)
        try:
            with self.path.open("rb") as handle:
                data = handle.read(SHOW_MAX_BYTES + 1)
        except OSError:
            return fallback
        text = data[:SHOW_MAX_BYTES].decode("utf-8", "replace")
        notes = [self.note] if self.note else []
        if len(data) > SHOW_MAX_BYTES:
            notes.append(f"only the first {SHOW_MAX_BYTES // 1000} kB of a larger file are shown")
        if text.count("\n") > HIGHLIGHT_MAX_LINES:
            notes.append(f"more than {HIGHLIGHT_MAX_LINES} lines: shown without highlighting")
        if "\ufffd" in text and b"\xef\xbf\xbd" not in data:
            notes.append("the file is not valid UTF-8: undecodable bytes show as \ufffd")
        if notes:
            text = f"# [tutor: {'; '.join(notes)}]\n" + text
        return text


def _stamp(path: Path) -> tuple[int, int] | None:
    """(mtime in ns, size) of `path`, None when it cannot be read."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size
