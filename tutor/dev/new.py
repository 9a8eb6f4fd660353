"""`tutor dev new`: every content file of a new drill, and its catalogue entry.

    tutor dev new t9 --track T --title "Clamp" --functions clamp
    tutor dev new c9 --track C --title "Scale" --functions scale --language cuda

writes drills/starters/<file> (a skeleton that fails as not-started), drills/solutions/<file>
(a stub to replace with the reference), drills/tests/test_<file> (a test module on the
harness), drills/content/<id>.md (a lesson skeleton with its self-check part), hints/<id>.yaml
(one ladder per mistake), drills/mutants/<id>/ and drills/bench/<id>.py (a CUDA C++ drill's
learner file is a .cu of kernels, and drills/host/<stem>.py launches them), and appends the entry
to drills.yaml as text (so the file's comments and layout stay as the author left them). It
never writes into tutor/ or tests/, never overwrites a file that exists, and never writes
through a symbolic link.

Everything or nothing: the new catalogue is proven to load (and to give back the title as
typed) before anything is written, every Python file it writes is proven to parse, each file
is written beside its place under a temporary name and then linked into place, and drills.yaml
is replaced last, in one rename. When any write fails (a full disk, a read-only folder), the
files and folders made so far are removed and drills.yaml is as it was, so the same command can
simply be run again.
"""

from __future__ import annotations

import ast
import keyword
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from tutor.course.catalogue import KERNEL_LANGUAGES, Catalogue, CatalogueError, load_catalogue
from tutor.course.paths import CoursePaths

_ID = re.compile(r"^[a-z][a-z0-9_-]*$")
# Names the written Python files import or define beside the drill's functions.
_TAKEN = frozenset({"torch", "triton", "tl", "annotations", "_copy_kernel"})


class ScaffoldError(Exception):
    """The new drill cannot be made as asked; the message says why."""


@dataclass(frozen=True)
class NewDrill:
    id: str
    track: str
    title: str
    functions: tuple[str, ...]
    language: str = "triton"

    @property
    def file(self) -> str:
        stem = re.sub(r"[^a-z0-9]+", "_", f"{self.id}_{self.functions[0]}".lower()).strip("_")
        return f"{stem}{KERNEL_LANGUAGES.get(self.language, '.py')}"

    @property
    def cuda(self) -> bool:
        return self.language == "cuda"


def new_drill(paths: CoursePaths, drill: NewDrill) -> list[Path]:
    """Write every file of `drill` and its catalogue entry; returns the files written."""
    catalogue = load_catalogue(paths)
    _validate(catalogue, drill)
    files = {
        paths.starter(drill.file): _cuda_starter(drill) if drill.cuda else _starter(drill),
        paths.solution(drill.file): _cuda_solution(drill) if drill.cuda else _solution(drill),
        **({paths.host(drill.file): _cuda_host(drill)} if drill.cuda else {}),
        paths.test_file(drill.file): _tests(drill),
        paths.lesson(drill.id): _lesson(drill),
        paths.hints(drill.id): _hints(drill),
        paths.bench_recipe(drill.id): _bench(drill),
        paths.mutants(drill.id) / "README.md": _mutants_readme(drill),
    }
    existing = [str(p.relative_to(paths.root)) for p in files if p.exists()]
    if existing:
        raise ScaffoldError(f"these files exist already: {', '.join(existing)}")
    for path, text in files.items():
        paths.writable(path)  # LinkRefused: an OSError, reported in one line
        if path.suffix == ".py":
            _must_parse(path, text)
    paths.writable(paths.catalogue)
    old = paths.catalogue.read_text(encoding="utf-8")
    catalogue_text = old.rstrip("\n") + "\n" + _entry(drill)
    _must_load(catalogue_text, drill)
    _write_all(paths, files, catalogue_text)
    return [paths.catalogue, *files]


def _validate(catalogue: Catalogue, drill: NewDrill) -> None:
    if drill.language not in KERNEL_LANGUAGES:
        raise ScaffoldError(
            f"--language {drill.language}: one of {', '.join(KERNEL_LANGUAGES)} is needed"
        )
    if not _ID.match(drill.id):
        raise ScaffoldError(f"drill id '{drill.id}' must be lower-case letters, digits, - or _")
    if any(d.id == drill.id for d in catalogue.drills):
        raise ScaffoldError(f"drill '{drill.id}' is in drills.yaml already")
    tracks = [t.id for t in catalogue.tracks]
    if drill.track not in tracks:
        raise ScaffoldError(f"unknown track '{drill.track}' (drills.yaml has {', '.join(tracks)})")
    if not drill.functions or not all(f.isidentifier() for f in drill.functions):
        raise ScaffoldError("--functions must list Python function names, e.g. add,scale")
    for name in drill.functions:
        if keyword.iskeyword(name):
            raise ScaffoldError(f"--functions: '{name}' is a Python keyword, not a function name")
        if name in _TAKEN:
            raise ScaffoldError(
                f"--functions: '{name}' is a name the drill's files use themselves "
                f"({', '.join(sorted(_TAKEN))}): choose another"
            )
    twice = sorted({f for f in drill.functions if drill.functions.count(f) > 1})
    if twice:
        raise ScaffoldError(f"--functions names {', '.join(twice)} more than once")
    if not drill.title.strip():
        raise ScaffoldError("--title must not be empty")
    if any(not ch.isprintable() for ch in drill.title):
        raise ScaffoldError("--title must be one line of printable text")


def _must_parse(path: Path, text: str) -> None:
    """A guard for the templates: a Python file that does not parse is never written."""
    try:
        ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise ScaffoldError(
            f"{path.name}:{exc.lineno}: the file this drill would get does not parse "
            f"({exc.msg}); nothing was written"
        ) from None


def _must_load(catalogue_text: str, drill: NewDrill) -> None:
    """The catalogue with the entry appended loads, and gives the title back as typed."""
    with tempfile.TemporaryDirectory(prefix="tutor-new-") as folder:
        trial = CoursePaths(Path(folder))
        try:
            trial.catalogue.write_text(catalogue_text, encoding="utf-8")
        except OSError as exc:
            raise ScaffoldError(
                f"{trial.catalogue}: cannot try the new entry ({exc.strerror}); nothing was written"
            ) from None
        try:
            title = load_catalogue(trial).drill(drill.id).title
        except CatalogueError as exc:  # the file's own layout may not take an appended entry
            message = str(exc).split(": ", 1)[-1]
            raise ScaffoldError(f"the new entry would break drills.yaml: {message}") from exc
    if title != drill.title:
        raise ScaffoldError(f"the title {drill.title!r} does not survive drills.yaml unchanged")


def _write_all(paths: CoursePaths, files: dict[Path, str], catalogue_text: str) -> None:
    """Every file, then drills.yaml; on any failure, undo what was made and say what failed."""
    made: list[Path] = []  # files and folders this call created, in the order it made them
    try:
        for path, text in files.items():
            missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
            path.parent.mkdir(parents=True, exist_ok=True)
            made.extend(reversed(missing))
            tmp = _written_beside(path, text)
            try:
                os.link(tmp, path)  # fails if the file appeared meanwhile: never overwritten
            finally:
                tmp.unlink()
            made.append(path)
        os.replace(_written_beside(paths.catalogue, catalogue_text), paths.catalogue)
    except OSError as exc:
        for path in reversed(made):
            try:
                path.rmdir() if path.is_dir() else path.unlink()
            except OSError:
                pass
        where = exc.filename or paths.catalogue
        raise ScaffoldError(
            f"{where}: {exc.strerror or exc}; nothing was written, drills.yaml is as it was"
        ) from None


def _written_beside(path: Path, text: str) -> Path:
    """`text` in a new temporary file in `path`'s folder (removed again if the write fails)."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        tmp.chmod(0o644)  # mkstemp made it private; course files are for everyone to read
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _in_docstring(text: str) -> str:
    """`text` as it must be written inside a triple-quoted docstring to read back unchanged."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _entry(drill: NewDrill) -> str:
    title = yaml.safe_dump(drill.title, default_style='"', allow_unicode=True, width=1 << 20)
    lines = [
        "",
        f"  - id: {drill.id}",
        f"    track: {drill.track}",
        f"    title: {title.strip()}",
        f"    file: {drill.file}",
        f"    functions: [{', '.join(drill.functions)}]",
        "    torch_core: []  # TODO: the torch operations that do this drill's work (matmul, ...)",
        '    taught: "TODO: the idea this drill teaches, in one line."',
        "    translations: [en]  # English first: add zh once drills/content/<id>.zh.md and"
        " hints/<id>.zh.yaml exist",
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
    title = _in_docstring(drill.title)
    return f'''"""{drill.id.upper()}: {title}. Write the kernel and its host wrapper.

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
    title = _in_docstring(drill.title)
    return f'''"""{drill.id.upper()} reference: {title}.

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


def _cuda_starter(drill: NewDrill) -> str:
    return f"""// {drill.id.upper()}: {drill.title}. Write the kernels; drills/host/ launches them.
//
// Run the tests with `tutor check {drill.id}`; the lesson is `tutor lesson {drill.id}`.

__global__ void {drill.functions[0]}_kernel(float* y, const float* x, long long n) {{
  TODO_KERNEL("{drill.functions[0]}_kernel: y[i] = ... for every i < n");
}}
"""


def _cuda_solution(drill: NewDrill) -> str:
    return f"""// {drill.id.upper()} reference: {drill.title}.
//
// TODO: replace this copy with the lesson-grade reference.

__global__ void {drill.functions[0]}_kernel(float* y, const float* x, long long n) {{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}}
"""


def _cuda_host(drill: NewDrill) -> str:
    stubs = "\n\n".join(
        f"def {name}(kernels, x: torch.Tensor) -> torch.Tensor:\n"
        f'    """TODO: what {name} computes (the formula), its shapes and dtypes."""\n'
        "    x = x.contiguous()\n"
        "    y = torch.empty_like(x)\n"
        f"    kernels.{drill.functions[0]}_kernel((64,), (256,), (y, x, x.numel()))\n"
        "    return y"
        for name in drill.functions
    )
    return f'''"""The host side of drill {drill.id}: checks the inputs, allocates, and launches the
learner's kernels (tutor.kernels.cuda.host)."""

from __future__ import annotations

import torch


{stubs}
'''


def _tests(drill: NewDrill) -> str:
    first, title = drill.functions[0], _in_docstring(drill.title)
    clean = "expect_clean, " if drill.cuda else ""
    deep = (
        f"""

def test_no_race_and_no_access_outside_the_buffers(impl, backend):
    \"\"\"The call again in the sanitizer builds, on the CPU whatever the backend.\"\"\"
    x = torch.randn(300).to(backend.device)
    expect_clean(impl, "{first}", x)
"""
        if drill.cuda
        else ""
    )
    return f'''"""Tests for drill {drill.id}: {title}.

TODO: say which inputs make which mistake visible, and why each tolerance is what it is.
"""

from __future__ import annotations

import torch

from tutor.harness import Suspect, Tolerance, {clean}expect_close, guarded, round_to

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
        # a function: the suspects are built only for a wrong y
        suspects=lambda: [Suspect("{drill.id}-mistake", round_to(-reference(x), x.dtype, backend),
                                  "TODO: what the mistake computes")],
        reads_guarded=True,
    )
{deep}'''


def _lesson(drill: NewDrill) -> str:
    return f"""# {drill.id.upper()} — {drill.title}

TODO: the idea, in a few paragraphs.

## A worked example

TODO: one small input, worked through by hand.

## The host side

TODO: the wrapper: shapes, allocation, the grid.

## Going faster

TODO: what limits the kernel and what a faster one does.

## Reading the coach

TODO: what `tutor bench` says of this drill's slow kernels (drills/mutants/<id>/perf-*),
with the numbers a GPU measured for them.

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
