"""The reference solutions (drills/solutions/<name>.py) as modules, for tests that read their
constants or call their helpers directly."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SOLUTIONS = Path(__file__).resolve().parents[1] / "drills" / "solutions"


def load_solution(name: str):
    """drills/solutions/<name>.py, imported afresh."""
    spec = importlib.util.spec_from_file_location(name, SOLUTIONS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
