"""Text snapshots of the app's screens, compared with golden files in tests/ui/snapshots/.

The screen is rendered as a terminal of the app's size would show it, without colours, then
volatile parts (timings, dates, the temporary course folder) are replaced by placeholders.
Rewrite the golden files after an intended change with

    TUTOR_UPDATE_SNAPSHOTS=1 python -m pytest tests/ui -k snapshot
"""

from __future__ import annotations

import difflib
import io
import os
import re
from pathlib import Path

from rich.console import Console
from textual.app import App
from textual.widgets import TextArea

from tutor.lang import cells

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE = os.environ.get("TUTOR_UPDATE_SNAPSHOTS") == "1"

_VOLATILE = [
    (re.compile(r"\d+(\.\d+)? s\)"), "#.# s)"),  # run and bench durations
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"), "<time>"),  # progress timestamps
    (re.compile(r"\d{8}-\d{6}(-\d+)?"), "<stamp>"),  # backup file suffixes
]


def screen_text(app: App) -> str:
    """The current screen (with the screens under a modal one) as plain text."""
    for area in app.screen.query(TextArea):
        area.cursor_blink = False
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        color_system=None,
        force_terminal=True,
        legacy_windows=False,
    )
    # The same render that App.export_screenshot records, kept as text instead of SVG.
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


def region_text(app: App, widget) -> str:
    """The words drawn inside `widget` (its borders left out), in reading order, one space
    between them (so a sentence wrapped over lines reads whole)."""
    region = widget.content_region
    lines = screen_text(app).splitlines()[region.y : region.bottom]
    return " ".join(
        " ".join(_cells(line, region.x, region.right) for line in lines).split()
    ).replace("\0", "")


def _cells(line: str, start: int, end: int) -> str:
    """The characters of `line` drawn in cells start..end (a CJK character takes two)."""
    out, x = [], 0
    for char in line:
        if start <= x < end:
            out.append(char)
        x += cells.width(char)
    return "".join(out)


def normalise(text: str, root: Path | None = None) -> str:
    if root is not None:
        text = text.replace(str(root), "<course>")
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return "\n".join(line.rstrip() for line in text.splitlines()).rstrip("\n") + "\n"


def assert_snapshot(app: App, name: str, root: Path | None = None) -> None:
    """Compare the screen with snapshots/<name>.txt (or rewrite it when updating)."""
    actual = normalise(screen_text(app), root)
    golden = SNAPSHOTS / f"{name}.txt"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
        return
    assert golden.exists(), f"no snapshot {golden.name}; create it with TUTOR_UPDATE_SNAPSHOTS=1"
    expected = golden.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True),
                actual.splitlines(True),
                f"{name} (golden)",
                f"{name} (now)",
            )
        )
        raise AssertionError(
            f"screen differs from {golden.name} (rewrite with "
            f"TUTOR_UPDATE_SNAPSHOTS=1 if intended):\n{diff}"
        )
