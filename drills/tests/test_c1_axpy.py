"""Drill c1: AXPY in CUDA C++, y = a * x + y in place on bf16, with a grid-stride loop. The
kernel runs on the GPU (NVRTC) or on the CPU (the system C++ compiler), and a deep check runs
it in the sanitizer builds for accesses past x or y.

The host launches blocks of 256 threads, as many as a test asks for (1 to 40 here), whatever n
is (drills/host/c1_axpy.py): with more elements than threads, only a loop that steps by the
grid's thread count reaches every element once.

Most tests use inputs whose output counts the updates: x = +-0.5 and a = 2, so a * x = +-1,
and y whole numbers plus 0.25, each sum exact in bf16. An element updated k times reads
y + k * a * x, so k is read off the output: 0 where the loop never came, 2 where two threads
(or one thread twice) came. The counts tell the index mistakes apart: a kernel that never
loops updates the first gridDim.x * blockDim.x elements (times the elements a thread takes at
a time: 1, 2 for bf16 pairs, 8 for 16-byte vectors) and none after; a step longer than the
grid leaves gaps with updated elements after them; a step shorter than the grid, or a start
without the block's offset, updates elements twice. A wrong formula gives no whole count,
and none of these is claimed for it. Where a test has fewer threads than 16-byte vectors,
n is large enough that a vector loop whose step is 8 times too long still reaches a second
stretch of vectors: a step too long never looks like no loop at all.

The elements after the last whole vector of 8 (n % 8 of them) are the tail a vectorized
kernel handles on its own: a tail updated twice or never, and nothing else wrong, is
`tail-wrong`. Accesses past n show only in the sanitizer build (`out-of-bounds`).
"""

from __future__ import annotations

import torch

from tutor.course import diagnoses as dx
from tutor.harness import (
    DrillFailure,
    Tolerance,
    expect_clean,
    expect_close,
    learner,
    round_to,
)

DRILL = "c1"
NO_STRIDE_LOOP = "no-stride-loop"
STRIDE_SKIPS = "stride-skips"
STRIDE_REPEATS = "stride-repeats"
BLOCK = 256  # threads in a block (drills/host/c1_axpy.py)
VEC = 8  # bf16 values in a 16-byte vector
WIDTHS = (1, 2, 4, 8)  # elements a thread may take at a time: one, a pair, 8 or 16 bytes
A = 2.0  # with x = +-0.5: each update adds +-1
# bf16 output: one ulp (2^-8 to 2^-7 of the value); a fused multiply-add on the GPU and a
# multiply then an add on the CPU differ by an fp32 rounding, which can move the bf16 result
# one ulp; atol for sums that cancel to near 0
BF16 = Tolerance(atol=1e-5, rtol=2**-7)


def _counting_inputs(n: int, device: str, seed: int, offset: int = 0):
    """x = +-0.5 and y = a whole number in [-8, 7] plus 0.25, both bf16, n elements each,
    starting `offset` elements into buffers of n + offset (so not 16-byte aligned when
    offset is 1)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randint(0, 2, (n + offset,), generator=gen) - 0.5
    y = torch.randint(-8, 8, (n + offset,), generator=gen) + 0.25
    x, y = x.to(torch.bfloat16).to(device), y.to(torch.bfloat16).to(device)
    return x[offset:], y[offset:]


def _normal_inputs(n: int, device: str, seed: int):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.randn(n, generator=gen) * 2.0).to(torch.bfloat16).to(device)
    y = (torch.randn(n, generator=gen) + 0.5).to(torch.bfloat16).to(device)
    return x, y


def _reference(a: float, x: torch.Tensor, y: torch.Tensor, backend) -> torch.Tensor:
    return round_to(a * x.float() + y.float(), torch.bfloat16, backend)


def _tail(n: int, device) -> torch.Tensor | None:
    """The elements after the last whole vector of 8, where a vectorized kernel's own tail
    code works; None when n is a multiple of 8."""
    if n % VEC == 0:
        return None
    tail = torch.zeros(n, dtype=torch.bool, device=device)
    tail[n - n % VEC :] = True
    return tail


def _run(impl, a, x, y, blocks, backend) -> torch.Tensor:
    """impl.axpy(a, x, y, blocks=blocks). A call that ends the CPU program (a write past x or
    y) is run again in the sanitizer builds, which name the access."""
    try:
        return impl.axpy(a, x, y, blocks=blocks)
    except DrillFailure as failure:
        if failure.diagnosis == dx.CUDA_ERROR and backend.is_cpu:
            expect_clean(impl, "axpy", a, x, y, blocks=blocks)
        raise


def _check(impl, a, x, y, blocks, backend, what: str) -> None:
    """y = a * x + y with `blocks` blocks (None: the host's default), compared with the
    reference; a wrong y whose every element was updated a whole number of times is named by
    where those counts are wrong."""
    before = y.clone()
    want = _reference(a, x, before, backend)
    out = _run(impl, a, x, y, blocks, backend)
    try:
        expect_close(
            out, want, what=what, tol=BF16, untouched=before, tail=_tail(y.numel(), y.device)
        )
    except DrillFailure as failure:
        if failure.diagnosis == dx.MISMATCH:
            counts = _updates(out, before, a * x.float())
            if counts is not None:
                _name_index_mistake(failure, counts, _threads(out))
        raise


def _threads(out: torch.Tensor) -> int:
    """gridDim.x * blockDim.x of the launch that wrote `out`."""
    launch = learner.call_behind(out).launches[-1]
    return launch.grid[0] * BLOCK


def _updates(out: torch.Tensor, before: torch.Tensor, step: torch.Tensor) -> torch.Tensor | None:
    """How many times each element got a * x added: out = before + k * step with k a whole
    number, 0 or more, for every element; else None (the output is no such sum)."""
    k = (out.double() - before.double()) / step.double()
    if not bool(torch.isfinite(k).all()):
        return None
    whole = k.round()
    if bool((k - whole).abs().gt(1e-3).any()) or bool((whole < 0).any()):
        return None
    return whole.long().cpu()


def _name_index_mistake(failure: DrillFailure, counts: torch.Tensor, threads: int) -> None:
    """Raise `failure` renamed after the pattern of update counts: elements updated twice
    (with others once or never: not one count everywhere, which a formula would give), or
    elements never updated: from the end of the grid's first pass on (no loop), or in gaps
    between updated ones (a step too long). Return when the counts fit none of them."""
    n = counts.numel()
    never, twice = counts == 0, counts >= 2
    if bool(twice.any()) and not bool((counts == counts[0]).all()):
        first = int(twice.nonzero()[0])
        seen = (
            f"{int(twice.sum())} of {n} elements were updated twice or more (y[{first}] "
            f"{int(counts[first])} times)"
        )
        if bool(never.any()):
            seen = f"{seen}, and {int(never.sum())} never"
        raise failure.renamed(
            STRIDE_REPEATS,
            f"{seen}: two threads, or one thread twice, took the same element. A step shorter "
            f"than the grid's {threads} threads, or a first index without the block's offset "
            "(blockIdx.x * blockDim.x), does that.",
        ) from None
    if not bool(never.any()) or bool(twice.any()):
        return
    start = int(never.nonzero()[0])
    for width in WIDTHS:
        end, tail_from = threads * width, n - n % width
        if start == end and bool(never[end:tail_from].all()) and not bool(never[tail_from:].any()):
            raise failure.renamed(
                NO_STRIDE_LOOP,
                _one_pass(width, end, tail_from, threads),
            ) from None
    updated_after = (~never[start:]).nonzero()
    if updated_after.numel():
        stop = start + int(updated_after[0])
        raise failure.renamed(
            STRIDE_SKIPS,
            f"{int(never.sum())} of {n} elements were never updated, in gaps between updated "
            f"ones (the first gap is y[{start}:{stop}]), and the rest once: the loop stepped "
            f"past elements. Its step must be the grid's {threads} threads (gridDim.x * "
            "blockDim.x), no more.",
        ) from None


def _one_pass(width: int, end: int, stop: int, threads: int) -> str:
    """What a kernel that never loops left: y[:end] updated once, y[end:stop] never."""
    if width == 1:
        return (
            f"y[0:{end}] was updated once and y[{end}:{stop}] never: {end} is the grid's "
            f"{threads} threads with one element each. Each thread stopped after its first "
            "element instead of stepping on by gridDim.x * blockDim.x until n."
        )
    return (
        f"y[0:{end}] was updated once and y[{end}:{stop}] never: {end} is the grid's "
        f"{threads} threads with {width} elements each, moved together. Each thread stopped "
        f"after its first {width} instead of stepping on, gridDim.x * blockDim.x groups of "
        f"{width} at a time, to the last whole group."
    )


def test_more_elements_than_threads(impl, backend):
    """40009 elements, 2 blocks: 512 threads, so each thread takes about 78 elements (or 10
    vectors of 8), an odd n with a tail of 1 after the last vector."""
    x, y = _counting_inputs(40009, backend.device, seed=0)
    _check(impl, A, x, y, 2, backend, "y (n = 40009) with 2 blocks of 256")


def test_n_of_1_and_fewer_elements_than_a_block(impl, backend):
    """n = 1, 100 and 255 with 3 blocks: most threads have no element at all."""
    for n, seed in ((1, 1), (100, 2), (255, 3)):
        x, y = _normal_inputs(n, backend.device, seed)
        _check(impl, -1.75, x, y, 3, backend, f"y (n = {n}) with 3 blocks of 256")


def test_normal_values(impl, backend):
    """4099 normal values with a = -1.75, 5 blocks: the formula, computed in float and rounded
    once to bf16."""
    x, y = _normal_inputs(4099, backend.device, seed=4)
    _check(impl, -1.75, x, y, 5, backend, "y (n = 4099, normal values) with 5 blocks of 256")


def test_tensors_not_16_byte_aligned(impl, backend):
    """9001 elements starting one element (2 bytes) into their buffers: no 16-byte vectors
    fit, and a kernel that vectorizes takes its one-element path."""
    x, y = _counting_inputs(9001, backend.device, seed=5, offset=1)
    _check(impl, A, x, y, 3, backend, "y (n = 9001, not 16-byte aligned) with 3 blocks of 256")


def test_one_block_and_more_blocks_than_needed(impl, backend):
    """50021 elements with a single block (a grid-stride loop of 196 steps), then 5003 with 40
    blocks: 10240 threads, more than there are elements."""
    x, y = _counting_inputs(50021, backend.device, seed=6)
    _check(impl, A, x, y, 1, backend, "y (n = 50021) with 1 block of 256")
    x, y = _counting_inputs(5003, backend.device, seed=7)
    _check(impl, A, x, y, 40, backend, "y (n = 5003) with 40 blocks of 256")


def test_the_default_grid(impl, backend):
    """70001 elements on the grid the bench uses: every SM full once on a GPU (no loop needed
    there), 4 blocks on the CPU."""
    x, y = _counting_inputs(70001, backend.device, seed=8)
    _check(impl, A, x, y, None, backend, "y (n = 70001) on the default grid")


def test_no_access_outside_the_buffers(impl, backend):
    """1003 elements with 3 blocks in the sanitizer builds (on the CPU): 768 threads, 125
    vectors of 8 and a tail of 3. No thread may read or write x[1003] or y[1003]."""
    x, y = _normal_inputs(1003, backend.device, seed=9)
    expect_clean(impl, "axpy", -1.75, x, y, blocks=3)
