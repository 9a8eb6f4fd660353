"""The tutor's packages stand in layers: each imports only from the layers below it.

docs/DESIGN.md draws them. Every import counts, an inner one (made inside a function to keep a
heavy module out of start-up) as much as one at the top: a loop between packages, even through
a function, ties them together.
"""

from __future__ import annotations

import ast
from pathlib import Path

TUTOR = Path(__file__).resolve().parents[1] / "tutor"
# Lowest first. `states` (the status words) and `cli` (the command) are modules, the rest
# packages; `tutor` itself holds only the version.
LAYERS = [
    "lang",
    "states",
    "course",
    "kernels",
    "run",
    "remote",
    "harness",
    "bench",
    "coach",
    "ui",
    "dev",
    "cli",
]


def _layer(module: str) -> str:
    if module == "tutor.__main__":  # `python -m tutor` is the command
        return "cli"
    parts = module.split(".")
    # `tutor.__version__` and the like are the package's own, not a layer's
    return parts[1] if len(parts) > 1 and not parts[1].startswith("__") else "tutor"


def _imports() -> list[tuple[str, str, int]]:
    """(importing module, imported tutor module, line) for every import in tutor/."""
    found = []
    for path in sorted(TUTOR.rglob("*.py")):
        relative = path.relative_to(TUTOR.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            found += [(module, name, node.lineno) for name in names if name.startswith("tutor")]
    return found


def test_every_module_belongs_to_a_layer():
    names = {
        p.stem if p.suffix == ".py" else p.name
        for p in TUTOR.iterdir()
        if p.name[0] not in "_." and (p.suffix == ".py" or (p / "__init__.py").is_file())
    }
    assert names == set(LAYERS), "a new top-level name: give it a layer here and in DESIGN.md"


def test_no_package_imports_from_a_layer_above_its_own():
    # `tutor` itself holds only the version, below everything.
    rank = {name: i for i, name in enumerate(LAYERS)} | {"tutor": -1}
    upward = [
        f"{module}:{line} imports {name}"
        for module, name, line in _imports()
        if _layer(module) != _layer(name) and rank[_layer(name)] > rank[_layer(module)]
    ]
    assert not upward, "\n".join(upward)
