"""What the lab's tools share: where the repository is, and a reference solution as a module.

The reference solutions are course files (drills/solutions/), not a package, so a tool that
launches their kernels directly loads them by path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_solution(name: str) -> ModuleType:
    """A reference solution as a module (drills/solutions/<name>.py)."""
    return load_module(ROOT / "drills" / "solutions" / f"{name}.py")


def load_module(path: Path) -> ModuleType:
    """The Python file at `path` as a module named after it."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
