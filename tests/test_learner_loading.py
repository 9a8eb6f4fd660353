"""Loading the learner's file: every problem becomes a diagnosis with the file and line."""

from __future__ import annotations

import pytest
import torch

from tutor.course import diagnoses as dx
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
    assert caught.value.diagnosis == dx.NOT_WRITTEN
    with pytest.raises(DrillFailure) as caught:
        module.broken([1])
    assert caught.value.diagnosis == dx.PYTHON_ERROR and caught.value.line == 4
    assert "IndexError" in caught.value.message
    with pytest.raises(DrillFailure) as caught:
        module.torch_only([1])
    assert caught.value.diagnosis == dx.TORCH_FALLBACK


def test_a_core_torch_operation_is_a_fallback_even_beside_a_kernel(tmp_path):
    """A drill's `torch_core` operations (drills.yaml), called while the learner's function
    runs, are `torch-fallback` although a kernel was launched; allocations, views, copies and
    operations outside the core are not."""
    path = tmp_path / "mine.py"
    path.write_text(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from tutor.kernels import launches\n"
        "def launch():\n"
        "    launches.record(launches.Launch(None, ()))  # stands in for kernel[grid](...)\n"
        "def by_operator(x):\n"
        "    launch()\n"
        "    return x @ x\n"
        "def by_functional(x):\n"
        "    launch()\n"
        "    return F.linear(x, x)\n"
        "def plumbing(x):\n"
        "    launch()\n"
        "    y = torch.empty_like(x).view(-1)\n"
        "    y.copy_(x.t().contiguous().view(-1))\n"
        "    return (y + 1).sum()\n"
    )
    module = learner.load(path, ("by_operator", "by_functional"), ("matmul", "linear"))
    x = torch.ones(3, 3)
    for name, shown in (("by_operator", "Tensor.matmul (a @ b)"), ("by_functional", "linear")):
        with pytest.raises(DrillFailure) as caught:
            getattr(module, name)(x)
        assert caught.value.diagnosis == dx.TORCH_FALLBACK
        assert "launched a Triton kernel, but called" in caught.value.message
        assert shown in caught.value.message
    assert module.plumbing(x) == 18.0
    assert learner.load(path, ("by_operator",)).by_operator(x).shape == (3, 3)  # no core declared


def test_operations_are_matched_by_name_however_spelled():
    from tutor.harness.torch_calls import operation

    assert operation(torch.Tensor.__rmatmul__) == "matmul"
    assert operation(torch.Tensor.exp_) == "exp"
    assert operation(torch.nn.functional.softmax) == "softmax"
    assert operation(torch.Tensor.__index__) == "index"
    assert operation(torch.Tensor.__int__) == "int"
