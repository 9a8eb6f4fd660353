"""Loading the learner's file: every problem becomes a diagnosis with the file and line."""

from __future__ import annotations

import pytest

from tutor import diagnoses as dx
from tutor.harness import learner
from tutor.harness.failures import DrillFailure


def _load(tmp_path, text, functions=("f",)):
    path = tmp_path / "mine.py"
    path.write_text(text)
    with pytest.raises(DrillFailure) as caught:
        learner.load(path, functions)
    return caught.value


def test_syntax_error_has_the_line(tmp_path):
    failure = _load(tmp_path, "x = 1\ndef f(:\n    pass\n")
    assert failure.diagnosis == dx.SYNTAX_ERROR and failure.line == 2
    assert "mine.py:2" in failure.message


def test_error_at_import_has_the_line(tmp_path):
    failure = _load(tmp_path, "import math\n\nvalue = math.nope\n")
    assert failure.diagnosis == dx.IMPORT_ERROR and failure.line == 3


def test_missing_function(tmp_path):
    failure = _load(tmp_path, "def g():\n    pass\n", functions=("f", "g"))
    assert failure.diagnosis == dx.MISSING_FUNCTION and "does not define f" in failure.message


def test_missing_file(tmp_path):
    with pytest.raises(DrillFailure) as caught:
        learner.load(tmp_path / "nope.py", ("f",))
    assert caught.value.diagnosis == dx.MISSING_FILE


def test_errors_while_running_are_classified(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "def todo(x):\n"
        "    raise NotImplementedError('TODO: write it')\n"
        "def broken(x):\n"
        "    return x[5]\n"
        "def torch_only(x):\n"
        "    return x\n"
    )
    module = learner.load(path, ("todo", "broken", "torch_only"))
    with pytest.raises(DrillFailure) as caught:
        module.todo([1])
    assert caught.value.diagnosis == dx.NOT_STARTED
    with pytest.raises(DrillFailure) as caught:
        module.broken([1])
    assert caught.value.diagnosis == dx.PYTHON_ERROR and caught.value.line == 4
    assert "IndexError" in caught.value.message
    with pytest.raises(DrillFailure) as caught:
        module.torch_only([1])
    assert caught.value.diagnosis == dx.TORCH_FALLBACK
