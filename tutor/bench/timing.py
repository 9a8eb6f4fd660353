"""Timing on the GPU for the bench process (tutor.bench.child): do_bench's median, GPU time per
call from CUDA-graph replay, and the card's anchors (copy bandwidth, an empty launch, the bf16
matmul rate) that the bench's numbers are shares of.
"""

from __future__ import annotations

import functools
import inspect
import math
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from tutor.bench.gpu_lock import exclusive

MATMUL_SIZE = 8192  # the matmul anchor: bf16 [8192, 8192] @ [8192, 8192], random values
COPY_BYTES = 2 * 2**30  # the copy anchor: a 2 GiB tensor copied to another
GRAPH_CALLS = 200  # kernel calls captured in one CUDA graph
GRAPH_REPLAYS = 11  # replays timed; the median is kept
WARM_S = 0.3  # untimed replays first, at most this long, until the card's clock has settled
WARMUP_MS, REP_MS = 25, 100  # do_bench's own defaults, spelled out
L2_FALLBACK_BYTES = 60 * 2**20  # an H200's L2, for a torch that does not report it


def _do_bench_flushes() -> bool:
    from triton import testing

    try:
        source = inspect.getsource(testing.do_bench)
    except (OSError, TypeError):
        return False
    return "clear_cache" in source or "zero_()" in source


def median_ms(fn: Callable[[], Any]) -> float:
    """do_bench's median in ms, on triton 3.x (return_mode) or an older one (quantiles)."""
    from triton.testing import do_bench

    with exclusive():
        if "return_mode" in inspect.signature(do_bench).parameters:
            return float(do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, return_mode="median"))
        result = do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, quantiles=[0.5])
        return float(result[0] if isinstance(result, (list, tuple)) else result)


def l2_bytes() -> int:
    """The L2 cache size of the current GPU in bytes."""
    import torch

    props = torch.cuda.get_device_properties(0)
    return int(getattr(props, "L2_cache_size", 0) or L2_FALLBACK_BYTES)


def graph_input_sets(bytes_moved: int, l2: int) -> int:
    """How many copies of a case's inputs a CUDA graph rotates over: enough that its calls
    together touch twice the L2, so no call finds the last one's data there (an 8 MB input
    replayed alone is read from the L2 at several times memory bandwidth). Every graph time
    of the bench, the learner's, the reference's and torch.compile's, rotates the same way."""
    return max(1, min(GRAPH_CALLS, math.ceil(2 * l2 / max(bytes_moved, 1))))


def rotation(names: list[str], round_: int) -> list[str]:
    """The order the graphs replay in on round `round_`: each one leads a round in turn, and
    the others follow in an order shuffled afresh each round (seeded by the round, so every run
    times the same orders). Why shuffled: on a card at its power limit, the graph timed right
    after a power-hungry one runs on a lower clock. Shifting one fixed order keeps every side
    between the same two neighbours; with ten sides in the lab's probe_attention_tiles, the
    two next to SDPA read 5-9% slower than the very same kernel further along (H100,
    2026-12-06)."""
    if not names:
        return []
    order = list(names)
    random.Random(round_).shuffle(order)
    lead = order.index(names[round_ % len(names)])
    return order[lead:] + order[:lead]


def warmed(elapsed_s: float, rounds: int, replays: int) -> bool:
    """Whether `rounds` untimed rounds of replays, `elapsed_s` in all, have warmed the card for
    `replays` timed ones: as long as those will take, and WARM_S at most. A card reaches its
    power limit only under a long load, so graphs of a few milliseconds need next to none."""
    if rounds == 0:
        return WARM_S <= 0  # WARM_S = 0: no warm-up at all (the lab's probe_graph_order)
    return elapsed_s >= min(WARM_S, replays * elapsed_s / rounds)


def graphs_us(
    calls: dict[str, Callable[[int], Any]],
    calls_per_graph: int = GRAPH_CALLS,
    replays: int = GRAPH_REPLAYS,
) -> tuple[dict[str, float], dict[str, BaseException]]:
    """GPU time per call of each implementation: its `calls_per_graph` calls captured in one
    CUDA graph, the graphs replayed in turn, the median replay / calls_per_graph of each.

    `calls[name](k)` makes that implementation's k-th call (it picks its own input set, so
    inputs can rotate). Returns the times and, apart, each graph that could not be captured or
    replayed (the others are still timed; a learner's wrapper may synchronise, say).

    Why in turn and after a warm-up: a big matmul or attention holds the card at its power
    limit, and its SM clock with it (an H100 at 700 W: 1980 MHz at most, a median of 1425-1710
    under a matmul), so the side timed first, on a card that had just been idle, ran faster
    than the next. Timed one after another in the bench process, m1's matmul at 4096^3 came to
    86-91% of cuBLAS; in turn after a warm-up, 96% (2026-12-05,
    docs/reports/2026-12-05/probe-graph-order.md). So the graphs replay untimed first (see
    `warmed`), then in rotation, every side on the same sustained clock.
    """
    graphs: dict[str, Any] = {}
    failed: dict[str, BaseException] = {}
    with exclusive():
        for name, call in calls.items():
            try:
                graphs[name] = _captured(call, calls_per_graph)
            except Exception as exc:  # noqa: BLE001 - reported to the caller by name
                failed[name] = exc
                if not _cuda_healthy():
                    return {}, failed
        while graphs:
            try:
                samples = _in_turn(graphs, replays)
                break
            except _ReplayFailed as failure:  # time the others again without it
                failed[failure.name] = failure.error
                del graphs[failure.name]
                if not _cuda_healthy():
                    return {}, failed
        else:
            samples = {}
        graphs.clear()
    return {n: statistics.median(t) / calls_per_graph for n, t in samples.items()}, failed


class _ReplayFailed(Exception):
    def __init__(self, name: str, error: BaseException):
        super().__init__(name)
        self.name, self.error = name, error


def _in_turn(graphs: dict[str, Any], replays: int) -> dict[str, list[float]]:
    """Each graph's replay times in µs: untimed rounds until `warmed`, then `replays` timed
    rounds in `rotation`. Every replay is waited for, so an error is the graph's that raised
    it (_ReplayFailed)."""
    import torch

    names = list(graphs)
    samples: dict[str, list[float]] = {name: [] for name in names}

    def replay(name: str, timed: bool) -> None:
        try:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            graphs[name].replay()
            end.record()
            end.synchronize()
        except Exception as exc:  # noqa: BLE001 - e.g. an illegal address in a learner's kernel
            raise _ReplayFailed(name, exc) from exc
        if timed:
            samples[name].append(start.elapsed_time(end) * 1000.0)

    started, rounds = time.monotonic(), 0
    while not warmed(time.monotonic() - started, rounds, replays):
        for name in names:
            replay(name, timed=False)
        rounds += 1
    for round_ in range(replays):
        for name in rotation(names, round_):
            replay(name, timed=True)
    return samples


def graph_us(
    call: Callable[[int], Any], calls: int = GRAPH_CALLS, replays: int = GRAPH_REPLAYS
) -> float:
    """GPU time per call of one implementation (`graphs_us` with one entry); raises what its
    capture raised."""
    times, failed = graphs_us({"call": call}, calls, replays)
    if failed:
        raise failed["call"]
    return times["call"]


def _captured(call: Callable[[int], Any], calls: int) -> Any:
    """`calls` calls of `call` captured in a CUDA graph, after three calls outside it. Its
    first replay is the first untimed round of `_in_turn`: a graph that takes seconds (torch
    eager's cross-entropy at V = 128256) is not replayed once more than it needs."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as capture asks
        for k in range(3):
            call(k)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for k in range(calls):
            call(k)
    return graph


def _cuda_healthy() -> bool:
    import torch

    try:
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001 - a sticky CUDA error makes every later call fail
        return False


def _matmul_tflops() -> float:
    """The card's dense bf16 matmul rate through torch (cuBLAS), on random values: the ceiling
    the M track's TFLOP/s are a share of."""
    import torch

    a = torch.randn(MATMUL_SIZE, MATMUL_SIZE, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    ms = median_ms(lambda: a @ b)
    return 2 * MATMUL_SIZE**3 / (ms * 1e-3) / 1e12


def _copy_gbps() -> float:
    import torch

    size = COPY_BYTES
    while True:
        try:
            src = torch.empty(size, dtype=torch.uint8, device="cuda").random_(0, 256)
            dst = torch.empty_like(src)
            break
        except torch.cuda.OutOfMemoryError:
            if size <= 2**28:
                raise
            size //= 2
            torch.cuda.empty_cache()
    ms = median_ms(lambda: dst.copy_(src))
    return 2 * size / (ms * 1e-3) / 1e9


def _empty_launch_us() -> tuple[float, float | None]:
    import torch

    buffer = torch.zeros(1, device="cuda")
    kernel = _empty_kernel()
    launch = lambda: kernel[(1,)](buffer)
    launch()
    torch.cuda.synchronize()
    do_bench_us = median_ms(launch) * 1000.0
    try:
        replay_us = graph_us(lambda k: launch())
    except Exception:  # noqa: BLE001 - the do_bench number is the one the targets use
        replay_us = None
    return do_bench_us, replay_us


@functools.cache
def _empty_kernel():
    """A kernel that does nothing, defined on first use so importing this module needs no triton."""
    import triton

    @triton.jit
    def _empty(x_ptr):
        pass

    return _empty


# ---- one case -----------------------------------------------------------------------------------
