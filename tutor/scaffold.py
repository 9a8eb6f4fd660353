"""`tutor dev new`: every content file of a new drill, and its catalogue entry.

    tutor dev new t9 --track T --title "Clamp" --functions clamp

writes drills/starters/<file> (a skeleton that fails as not-started), drills/solutions/<file>
(a stub to replace with the reference), drills/tests/test_<file> (a test module on the
harness), drills/content/<id>.md (a lesson skeleton with its self-check part), hints/<id>.yaml
(one ladder per mistake), drills/mutants/<id>/ and drills/bench/<id>.py, and appends the entry
to drills.yaml as text (so the file's comments and layout stay as the author left them). It
never writes into tutor/ or tests/, and never overwrites a file that exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tutor.catalogue import Catalogue, CatalogueError, load_catalogue
from tutor.paths import CoursePaths

_ID = re.compile(r"^[a-z][a-z0-9_-]*$")


class ScaffoldError(Exception):
    """The new drill cannot be made as asked; the message says why."""


@dataclass(frozen=True)
class NewDrill:
    id: str
    track: str
    title: str
    functions: tuple[str, ...]

    @property
    def file(self) -> str:
        stem = re.sub(r"[^a-z0-9]+", "_", f"{self.id}_{self.functions[0]}".lower()).strip("_")
        return f"{stem}.py"


def new_drill(paths: CoursePaths, drill: NewDrill) -> list[Path]:
    """Write every file of `drill` and its catalogue entry; returns the files written."""
    catalogue = load_catalogue(paths)
    _validate(catalogue, drill)
    files = {
        paths.starter(drill.file): _starter(drill),
        paths.solution(drill.file): _solution(drill),
        paths.test_file(drill.file): _tests(drill),
        paths.lesson(drill.id): _lesson(drill),
        paths.hints(drill.id): _hints(drill),
        paths.bench_recipe(drill.id): _bench(drill),
        paths.mutants(drill.id) / "README.md": _mutants_readme(drill),
    }
    existing = [str(p.relative_to(paths.root)) for p in files if p.exists()]
    if existing:
        raise ScaffoldError(f"these files exist already: {', '.join(existing)}")
    old = paths.catalogue.read_text(encoding="utf-8")
    paths.catalogue.write_text(old.rstrip("\n") + "\n" + _entry(drill), encoding="utf-8")
    try:
        load_catalogue(paths)
    except CatalogueError as exc:  # the file's own layout may not take an appended entry
        paths.catalogue.write_text(old, encoding="utf-8")
        raise ScaffoldError(f"the new entry would break drills.yaml: {exc}") from exc
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return [paths.catalogue, *files]


def _validate(catalogue: Catalogue, drill: NewDrill) -> None:
    if not _ID.match(drill.id):
        raise ScaffoldError(f"drill id '{drill.id}' must be lower-case letters, digits, - or _")
    if any(d.id == drill.id for d in catalogue.drills):
        raise ScaffoldError(f"drill '{drill.id}' is in drills.yaml already")
    tracks = [t.id for t in catalogue.tracks]
    if drill.track not in tracks:
        raise ScaffoldError(f"unknown track '{drill.track}' (drills.yaml has {', '.join(tracks)})")
    if not drill.functions or not all(f.isidentifier() for f in drill.functions):
        raise ScaffoldError("--functions must list Python function names, e.g. add,scale")
    if not drill.title.strip():
        raise ScaffoldError("--title must not be empty")


def _entry(drill: NewDrill) -> str:
    title = drill.title.replace('"', "'")
    lines = [
        "",
        f"  - id: {drill.id}",
        f"    track: {drill.track}",
        f'    title: "{title}"',
        f"    file: {drill.file}",
        f"    functions: [{', '.join(drill.functions)}]",
        "    torch_core: []  # TODO: the torch operations that do this drill's work (matmul, ...)",
        '    taught: "TODO: the idea this drill teaches, in one line."',
        "    mistakes:",
        f'      - {{id: {drill.id}-mistake, summary: "TODO: the mistake, in one line"}}',
    ]
    return "\n".join(lines) + "\n"


def _stubs(drill: NewDrill, body: str) -> str:
    return "\n\n".join(
        f"def {name}(x: torch.Tensor) -> torch.Tensor:\n"
        f'    """TODO: what {name} computes (the formula), its shapes and dtypes."""\n'
        f"    {body.format(name=name)}"
        for name in drill.functions
    )


def _starter(drill: NewDrill) -> str:
    return f'''"""{drill.id.upper()}: {drill.title}. Write the kernel and its host wrapper.

Run the tests with `tutor check {drill.id}`; the lesson is `tutor lesson {drill.id}`.
"""

from __future__ import annotations

import torch
import triton  # noqa: F401 - the kernel is yours to write
import triton.language as tl  # noqa: F401


# TODO: the @triton.jit kernel.


{_stubs(drill, 'raise NotImplementedError("TODO: write {name}")')}
'''


def _solution(drill: NewDrill) -> str:
    return f'''"""{drill.id.upper()} reference: {drill.title}.

TODO: replace this stub with the lesson-grade reference (kernel first, then a typed wrapper
that checks shapes, allocates, builds the grid with triton.cdiv and passes constexprs by
keyword).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


{
        _stubs(
            drill,
            """x = x.contiguous()
    y = torch.empty_like(x)
    _copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK_SIZE=1024)
    return y""",
        )
    }
'''


def _tests(drill: NewDrill) -> str:
    first = drill.functions[0]
    return f'''"""Tests for drill {drill.id}: {drill.title}.

TODO: say which inputs make which mistake visible, and why each tolerance is what it is.
"""

from __future__ import annotations

import torch

from tutor.harness import Suspect, Tolerance, expect_close, guarded, round_to

DRILL = "{drill.id}"

# fp32: TODO, why this tolerance.
FP32 = Tolerance(atol=1e-6, rtol=1e-6)


def reference(x: torch.Tensor) -> torch.Tensor:
    """TODO: the right answer, computed with torch in fp32 or fp64."""
    return x.float()


def test_{first}_fp32(impl, backend):
    gen = torch.Generator().manual_seed(0)
    x, _ = guarded(torch.randn(1000, generator=gen).to(backend.device))
    y = impl.{first}(x)
    expect_close(
        y, round_to(reference(x), x.dtype, backend), what="y", tol=FP32,
        suspects=[Suspect("{drill.id}-mistake", round_to(-reference(x), x.dtype, backend),
                          "TODO: what the mistake computes")],
        reads_guarded=True,
    )
'''


def _lesson(drill: NewDrill) -> str:
    return f"""# {drill.id.upper()} — {drill.title}

TODO: the idea, in a few paragraphs.

## A worked example

TODO: one small input, worked through by hand.

## The host side

TODO: the wrapper: shapes, allocation, the grid.

## Going faster

TODO: what limits the kernel and what a faster one does.

## Check yourself

1. TODO: a question.

<details><summary>Answer</summary>

TODO: its answer.

</details>
"""


def _hints(drill: NewDrill) -> str:
    return f"""# Hint ladders for {drill.id}: a nudge, a pointer, the fix.
format: 1
diagnoses:
  {drill.id}-mistake:
    title: "TODO: the name of the mistake"
    stages:
      - "TODO: a question that makes the learner look in the right place."
      - "TODO: where in the kernel, and why it goes wrong."
      - "TODO: the fix, as code."
"""


def _bench(drill: NewDrill) -> str:
    return f'''"""What `tutor bench {drill.id}` needs beside the kernel: inputs, bytes, eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal


def eager(x: torch.Tensor) -> torch.Tensor:
    """TODO: the same function in torch, the yardstick (and what torch.compile compiles)."""
    return x.clone()


RECIPES = [
    Recipe(
        function="{drill.functions[0]}",
        dims=("n",),
        make=lambda s, dtype, device, gen: (normal((s["n"],), dtype, device, gen),),
        nbytes=lambda s, itemsize: 2 * s["n"] * itemsize,  # x read, y written
        eager=eager,
    ),
]
'''


def _mutants_readme(drill: NewDrill) -> str:
    return f"""Known-buggy kernels for {drill.id}, one mistake each: `<diagnosis>__<variant>.py`, at
least two per mistake and written differently. `correct__<variant>.py` files are right answers
in other styles: they must pass with no diagnosis. `tutor dev check {drill.id}` proves them.
"""
