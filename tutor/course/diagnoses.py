"""The diagnosis ids the tutor knows without a drill's help, and how specific each one is.

A drill's own ids (from its hints file, e.g. `padding-where`) are the most specific. Ids here are
shared by every drill: cross-cutting mistakes, errors that stop the code running, and generic
failure patterns. When a run has several diagnoses, the most specific is shown first.
"""

from __future__ import annotations

# Rank 0 is reserved for a drill's own ids; lower rank = more specific.
DRILL_RANK = 0

# A function of the starter not written yet (its TODO body). Not the drill status of the same
# word (tutor.states.DrillStatus.NOT_STARTED): that one says where the learner stands.
NOT_WRITTEN = "not-started"
MISSING_FILE = "missing-file"
SYNTAX_ERROR = "syntax-error"
IMPORT_ERROR = "import-error"
MISSING_FUNCTION = "missing-function"
PYTHON_ERROR = "python-error"
TRITON_COMPILE_ERROR = "triton-compile-error"
# A CUDA C++ file the compiler refuses (NVRTC on a GPU, the system's C++ compiler on the CPU).
COMPILE_ERROR = "compile-error"
# A compiler, sanitizer or library a CUDA C++ drill needs is not on this machine.
TOOLCHAIN_MISSING = "toolchain-missing"
# What a CUDA C++ kernel's run shows beyond its outputs: a sanitizer's report or the CPU
# scheduler's (tutor.kernels.cuda): two threads touch shared memory with no barrier between
# them; threads of different blocks write one global address without an atomic; a barrier not
# every thread reaches; a shuffle whose mask names lanes that never call it; an access past a
# buffer; past a __shared__ array.
MISSING_BARRIER = "missing-barrier"
MISSING_ATOMIC = "missing-atomic"
BARRIER_DIVERGENT = "barrier-divergent"
SHUFFLE_MASK = "shuffle-mask"
OUT_OF_BOUNDS = "out-of-bounds"
SHARED_TOO_SMALL = "shared-too-small"
# Block pointers (tl.make_block_ptr, tl.advance), which Triton 3.9 removed for tensor descriptors.
BLOCK_POINTERS = "block-pointers"
# What Triton's CPU interpreter cannot run although a GPU does: not the learner's mistake.
INTERPRETER_LIMIT = "interpreter-limit"
CUDA_ERROR = "cuda-error"
KERNEL_HANG = "kernel-hang"
PROCESS_CRASHED = "process-crashed"
# The learner's code killed or stopped the process that runs it (its parent, the run's keeper).
SIGNALS_PARENT = "signals-parent"
OUT_OF_MEMORY = "out-of-memory"
BF16_NO_UPCAST = "bf16-no-upcast"
MISSING_MASK = "missing-mask"
ROW_STRIDE = "row-stride"
TORCH_FALLBACK = "torch-fallback"
GRID_TOO_SMALL = "grid-too-small"
WRONG_SHAPE = "wrong-shape"
WRONG_DTYPE = "wrong-dtype"
NAN_OR_INF = "nan-or-inf"
OUTPUT_UNTOUCHED = "output-untouched"
TAIL_WRONG = "tail-wrong"
MISMATCH = "mismatch"

GENERIC_RANKS: dict[str, int] = {
    # Errors that stop the learner's code running: nothing else can be judged until they go.
    SYNTAX_ERROR: 1,
    IMPORT_ERROR: 1,
    MISSING_FILE: 1,
    MISSING_FUNCTION: 1,
    TRITON_COMPILE_ERROR: 1,
    COMPILE_ERROR: 1,
    TOOLCHAIN_MISSING: 1,
    BLOCK_POINTERS: 1,
    INTERPRETER_LIMIT: 1,
    PYTHON_ERROR: 1,
    # Cross-cutting mistakes any drill can make.
    BF16_NO_UPCAST: 2,
    MISSING_MASK: 2,
    ROW_STRIDE: 2,
    TORCH_FALLBACK: 2,
    GRID_TOO_SMALL: 2,
    CUDA_ERROR: 2,
    KERNEL_HANG: 2,
    PROCESS_CRASHED: 2,
    SIGNALS_PARENT: 2,
    OUT_OF_MEMORY: 2,
    MISSING_BARRIER: 2,
    MISSING_ATOMIC: 2,
    BARRIER_DIVERGENT: 2,
    SHUFFLE_MASK: 2,
    OUT_OF_BOUNDS: 2,
    SHARED_TOO_SMALL: 2,
    # Patterns seen in the output when no named mistake matched.
    WRONG_SHAPE: 3,
    WRONG_DTYPE: 3,
    TAIL_WRONG: 3,
    OUTPUT_UNTOUCHED: 3,
    NAN_OR_INF: 3,
    MISMATCH: 4,
    # The starter as shipped: least informative, shown only when nothing else failed.
    NOT_WRITTEN: 5,
}


def rank(diagnosis: str) -> int:
    """How specific a diagnosis is (0 = a drill's own named mistake)."""
    return GENERIC_RANKS.get(diagnosis, DRILL_RANK)


def most_specific_first(diagnoses: list[str]) -> list[str]:
    """Unique ids ordered by specificity, then by how often they occurred, then first seen."""
    counts: dict[str, int] = {}
    for d in diagnoses:
        counts[d] = counts.get(d, 0) + 1
    order = list(counts)
    return sorted(order, key=lambda d: (rank(d), -counts[d], order.index(d)))
