"""The core never imports Textual, and the command line starts without torch."""

from __future__ import annotations

import subprocess
import sys

CORE = [
    "tutor.course.catalogue",
    "tutor.run.runner",
    "tutor.coach.run_hints",
    "tutor.course.hints",
    "tutor.course.progress",
    "tutor.course.workspace",
    "tutor.coach.report",
    "tutor.course.diagnoses",
    "tutor.cli",
    "tutor.bench",
]


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {name.split(".")[0] for name in out.stdout.split()}


def test_core_imports_no_textual():
    loaded = _loaded_after("\n".join(f"import {m}" for m in CORE))
    assert "textual" not in loaded


def test_cli_help_imports_neither_torch_nor_triton_nor_textual():
    loaded = _loaded_after("from tutor.cli import build_parser; build_parser().format_help()")
    assert not loaded & {"torch", "triton", "textual"}
