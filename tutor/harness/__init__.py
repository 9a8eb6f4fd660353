"""The API a drill's tests are written against; it runs inside the child pytest process.

    from tutor.harness import Suspect, Tolerance, expect_close, guarded, round_to

- `expect_close(actual, expected, what=, tol=, suspects=, ...)`: compare an output with the
  reference and, on a mismatch, with `Suspect`s (what each known mistake would produce), then
  with the generic patterns; fails with a `DrillFailure` that carries the diagnosis id.
- `expect_unchanged(after, before, what=)`: memory around a buffer must be as the test left it.
- `raise_if_edges_unwritten(failure, out, want, tol, what)`: a failed 2-D output whose last
  tile rows or columns were never written, the rest right, is renamed `grid-too-small`.
- `guarded(values)`, `row_sliced(values, slack)`, `padded_tail(n, block, shape, device)`: inputs
  that make mistakes visible (NaN around the data, rows further apart than N).
- `round_to(values, dtype, backend)`: an fp32 reference rounded as the backend's `.to()` rounds.
- `expect_clean(impl, name, *args)`: the call again where races and out-of-bounds accesses are
  seen (CUDA C++'s sanitizer builds); the first found fails the test with its lines.
- `blocks_launched(output, candidates)`: the block sizes the learner's launches behind `output`
  were given, among `candidates` (all of them when none): suspects built for those name the
  learner's own block.
- `observe(fn, name, path, torch_core=())`: call a learner function the way the `impl` fixture
  does (errors become diagnoses; a call without a Triton launch, or one that calls a drill's
  core torch operation, is `torch-fallback`).

The fixtures `impl` (the learner's module, its functions observed), `backend` and `device` come
from the `tutor.harness.drill_plugin` pytest plugin that drills/tests/conftest.py names.
"""

from tutor.course import diagnoses
from tutor.harness.backend import Backend, round_to
from tutor.harness.checks import (
    Suspect,
    Tolerance,
    expect_close,
    expect_unchanged,
    raise_if_edges_unwritten,
    where_wrong,
)
from tutor.harness.failures import DrillFailure
from tutor.harness.inputs import GUARD, guarded, padded_tail, row_sliced, row_sliced_buffer
from tutor.harness.learner import (
    Learner,
    blocks_launched,
    call_or_refuse,
    expect_clean,
    observed,
)

observe = observed

__all__ = [
    "GUARD",
    "Backend",
    "DrillFailure",
    "Learner",
    "Suspect",
    "Tolerance",
    "blocks_launched",
    "call_or_refuse",
    "diagnoses",
    "expect_clean",
    "expect_close",
    "expect_unchanged",
    "guarded",
    "observe",
    "padded_tail",
    "raise_if_edges_unwritten",
    "round_to",
    "row_sliced",
    "row_sliced_buffer",
    "where_wrong",
]
