"""The code view stays responsive for any learner file: plain text past a size, and says why."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from tutor.ui.widgets.code_view import HIGHLIGHT_MAX_LINES, SHOW_MAX_BYTES, CodeView

pytestmark = pytest.mark.anyio


class _OneView(App):
    def compose(self) -> ComposeResult:
        yield CodeView(id="code")


async def test_a_huge_file_is_shown_plain_and_cut_with_a_note(tmp_path):
    huge = tmp_path / "mine.py"
    huge.write_text("x = 1  # a learner who pasted a lot\n" * 20_000)  # 720 kB, 20,000 lines
    app = _OneView()
    async with app.run_test() as pilot:
        view = app.query_one(CodeView)
        view.show_file(huge)
        await pilot.pause()
        first = view.document.get_line(0)
        assert view.language is None
        assert f"only the first {SHOW_MAX_BYTES // 1000} kB" in first
        assert f"more than {HIGHLIGHT_MAX_LINES} lines" in first
        assert huge.read_text().startswith("x = 1")  # the file itself is untouched


async def test_an_ordinary_file_is_highlighted_as_it_is(tmp_path):
    small = tmp_path / "mine.py"
    small.write_text("import triton\n")
    app = _OneView()
    async with app.run_test() as pilot:
        view = app.query_one(CodeView)
        view.show_file(small)
        await pilot.pause()
        assert view.text == "import triton\n"


async def test_a_file_that_is_not_utf8_is_shown_with_a_note(tmp_path):
    latin = tmp_path / "mine.py"
    latin.write_bytes(b"# caf\xe9\nx = 1\n")
    app = _OneView()
    async with app.run_test() as pilot:
        view = app.query_one(CodeView)
        view.show_file(latin)
        await pilot.pause()
        assert "not valid UTF-8" in view.document.get_line(0)


async def test_a_cuda_file_is_highlighted_as_cpp_and_a_python_one_as_python(tmp_path):
    """The highlighting follows the file's kernel language (tutor.kernels: its `syntax`)."""
    kernel = tmp_path / "c2_rmsnorm.cu"
    kernel.write_text("__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n")
    script = tmp_path / "t1_gelu.py"
    script.write_text("import triton\n")
    app = _OneView()
    async with app.run_test() as pilot:
        view = app.query_one(CodeView)
        view.show_file(kernel)
        await pilot.pause()
        assert view.language == "cpp"
        view.show_file(script)
        await pilot.pause()
        assert view.language == "python"
