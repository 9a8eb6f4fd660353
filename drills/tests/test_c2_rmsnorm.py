"""Drill c2: RMSNorm in CUDA C++, the row's sum of squares reduced by warp shuffles and shared
memory. The kernels run on the GPU (NVRTC) or on the CPU (the system C++ compiler), and a deep
check runs each in the sanitizer builds for races and out-of-bounds accesses.

The host launches one block per row with one thread for each 8 columns, in whole warps, at most
1024 (drills/host/c2_rmsnorm.py); the tests read the block a call was given from its launch.
What a mistake gives depends on which columns each thread took: one at a time (thread t takes
t, t + blockDim.x, ...), in pairs (__nv_bfloat162), or 8 at a time (16-byte loads); the
suspects are built for each.

Shared memory: on the CPU every block starts with its `__shared__` arrays filled with 0xFF
bytes (NaN as a float), so a slot no warp wrote reads NaN on every run; on a GPU it holds
whatever an earlier block left there. Either way, a block reduction that is right with 32 warps
and wrong with fewer read slots that no warp of its block wrote.
"""

from __future__ import annotations

import torch

from tutor.course import diagnoses as dx
from tutor.harness import (
    DrillFailure,
    Suspect,
    Tolerance,
    expect_clean,
    expect_close,
    learner,
    round_to,
    row_sliced,
)

DRILL = "c2"
DIVIDE_BY_THREADS = "divide-by-threads"
UNWRITTEN_SLOTS = "unwritten-slots"
HALF_WARP_SUM = "half-warp-sum"
BF16_ACCUMULATOR = "bf16-accumulator"
WARP = 32
# bf16 output: one ulp of the result (the fp32 sum's order differs from torch's)
BF16 = Tolerance(atol=1e-2, rtol=8e-3)
WIDTHS = (8, 2, 1)  # columns a thread takes at a time: 16-byte loads, bf16 pairs, one value


def _inputs(rows: int, n: int, device: str, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.randn(rows, n, generator=gen) * 2 + 0.5).to(torch.bfloat16)
    w = (torch.rand(n, generator=gen) + 0.5).to(torch.bfloat16)
    return x.to(device), w.to(device)


def _normalized(x: torch.Tensor, w: torch.Tensor, sum_sq: torch.Tensor, divisor, eps, backend):
    """y from a row's sum of squares (fp32, [rows, 1]) divided by `divisor`."""
    rstd = torch.rsqrt(sum_sq / divisor + eps)
    return round_to(x.float() * rstd * w.float(), x.dtype, backend)


def _reference(x, w, eps, backend):
    return _normalized(x, w, x.float().pow(2).sum(-1, keepdim=True), x.shape[-1], eps, backend)


def _threads(y: torch.Tensor) -> int:
    """blockDim.x of the launch that wrote `y`."""
    return learner.call_behind(y).launches[-1].blocks[0]


def _lanes(n: int, threads: int, width: int) -> torch.Tensor:
    """The lane that takes each column when each thread takes `width` columns at a time."""
    return (torch.arange(n) // width) % threads % WARP


def _suspects(x, w, eps, backend, threads: int) -> list[Suspect]:
    n, sq = x.shape[-1], x.float().pow(2)
    found = [
        Suspect(
            DIVIDE_BY_THREADS,
            _normalized(x, w, sq.sum(-1, keepdim=True), threads, eps, backend),
            f"the mean taken as the sum divided by blockDim.x ({threads}) instead of n_cols ({n})",
        )
    ]
    for width in WIDTHS:
        low_half = (_lanes(n, threads, width) < WARP // 2).to(x.device)
        found.append(
            Suspect(
                HALF_WARP_SUM,
                _normalized(x, w, (sq * low_half).sum(-1, keepdim=True), n, eps, backend),
                f"a sum of squares over lanes 0-15 of each warp only (each thread taking its "
                f"columns {width} at a time): the shuffles add up half a warp",
            )
        )
    return found


def _run(impl, x, w, eps, backend) -> torch.Tensor:
    """impl.rms_norm(x, w, eps). A call that ends the CPU program (a write far past a buffer or
    a __shared__ array) is run again in the sanitizer builds, which name the access."""
    try:
        return impl.rms_norm(x, w, eps)
    except DrillFailure as failure:
        if failure.diagnosis == dx.CUDA_ERROR and backend.is_cpu:
            expect_clean(impl, "rms_norm", x, w, eps)
        raise


def _check(impl, x, w, eps, backend, want=None) -> None:
    """y = rms_norm(x) compared with the reference; a wrong y that no suspect explains is
    probed with a block of 32 warps."""
    y = _run(impl, x, w, eps, backend)
    threads = _threads(y)
    want = _reference(x, w, eps, backend) if want is None else want
    try:
        expect_close(
            y,
            want,
            what="y",
            tol=BF16,
            suspects=lambda: _suspects(x, w, eps, backend, threads),
        )
    except DrillFailure as failure:
        if failure.diagnosis in (dx.NAN_OR_INF, dx.MISMATCH) and threads < WARP * WARP:
            _right_with_every_warp(impl, threads, backend, failure)
        raise


def _right_with_every_warp(impl, threads: int, backend, failure: DrillFailure) -> None:
    """Name unwritten-slots when a row whose block has all 32 warps comes out right and a row
    of the same kind whose block has 28 comes out wrong: with fewer than 32 warps the first
    warp summed shared-memory slots that no warp of its block wrote."""
    results = []
    for n, seed in ((8000, 7), (7000, 8)):  # 1000 and 875 vectors of 8: 1024 and 896 threads
        x, w = _inputs(1, n, backend.device, seed=seed)
        y = impl.rms_norm(x, w, 1e-6)
        want = _reference(x, w, 1e-6, backend)
        right = torch.allclose(y.float(), want.float(), atol=BF16.atol, rtol=BF16.rtol)
        results.append((_threads(y), right))
    if results == [(WARP * WARP, True), (28 * WARP, False)]:
        raise failure.renamed(
            UNWRITTEN_SLOTS,
            f"With blockDim.x = {threads} y is wrong. One row of 8000 columns, whose block has "
            "all 32 warps, comes out right, and one of 7000, whose block has 28, wrong: with "
            "fewer than 32 warps the first warp summed slots of warp_sums that no warp wrote (on "
            "the CPU they hold NaN, on a GPU whatever an earlier block left).",
        ) from None


def test_rows_wider_than_the_block(impl, backend):
    """Three rows of 1000 columns, 128 threads: every warp's sum, and a mean over n_cols."""
    x, w = _inputs(3, 1000, backend.device)
    _check(impl, x, w, 1e-6, backend)


def test_rows_narrower_than_a_warp_and_sliced_rows(impl, backend):
    """Rows of 20 columns (most lanes have nothing), read from rows 33 columns apart."""
    x, w = _inputs(4, 20, backend.device, seed=1)
    view, _base = row_sliced(x, slack=13)
    _check(impl, view, w, 1e-5, backend, want=_reference(x, w, 1e-5, backend))


def test_a_block_of_1024_threads(impl, backend):
    """One row of 8000 columns: 1024 threads, a slot of warp_sums for each of 32 warps."""
    x, w = _inputs(1, 8000, backend.device, seed=3)
    _check(impl, x, w, 1e-6, backend)


def _bf16_accumulated(count: int, chunk: int, square: float) -> float:
    """A thread's sum of `count` equal squares, added `chunk` at a time to a bf16 sum."""
    total = torch.zeros((), dtype=torch.bfloat16)
    for _ in range(count // chunk):
        total = (total.float() + chunk * square).to(torch.bfloat16)
    return float(total)


def test_a_long_row_sums_in_fp32(impl, backend):
    """One row of 311296 values of +-1.5: each of 1024 threads adds 304 squares of 2.25. In
    fp32 that is exact; a bf16 sum rounds to a spacing of 2 past 256 and of 4 past 512."""
    n, square = 1024 * 8 * 38, 2.25
    gen = torch.Generator().manual_seed(4)
    signs = torch.randint(0, 2, (1, n), generator=gen) * 2 - 1
    x = (signs * 1.5).to(torch.bfloat16).to(backend.device)
    w = (torch.rand(n, generator=gen) + 0.5).to(torch.bfloat16).to(backend.device)
    y = _run(impl, x, w, 1e-6, backend)
    threads = _threads(y)

    def suspects() -> list[Suspect]:
        per_thread = n // threads
        # the mistakes the other tests name, then the one only a long row shows
        return _suspects(x, w, 1e-6, backend, threads) + [
            Suspect(
                BF16_ACCUMULATOR,
                _normalized(
                    x,
                    w,
                    torch.full(
                        (1, 1),
                        threads * _bf16_accumulated(per_thread, chunk, square),
                        device=x.device,
                    ),
                    n,
                    1e-6,
                    backend,
                ),
                f"a sum of squares kept in a __nv_bfloat16, its squares added {chunk} at a "
                "time: each addition rounds to bf16's 8 significant bits",
            )
            for chunk in WIDTHS
        ]

    expect_close(y, _reference(x, w, 1e-6, backend), what="y", tol=BF16, suspects=suspects)


def test_no_race_and_no_access_outside_the_buffers(impl, backend):
    """The same call in the sanitizer builds (on the CPU): no two threads touch shared memory
    without a barrier between them, and no thread reads past a buffer or a __shared__ array.
    Two rows of 4000 columns: 512 threads, 16 warps."""
    x, w = _inputs(2, 4000, backend.device, seed=2)
    expect_clean(impl, "rms_norm", x, w, 1e-6)
