"""The perf coach's judgement: why a correct kernel is slower than its yardstick, from the facts.

    findings = diagnose(case)          # case: a Case, built from one bench row's facts
    findings[0].id, findings[0].text   # "spills", "your kernel keeps 96 values per thread ..."

A perf diagnosis is named like a mistake, and claimed only with evidence: the compile facts of
every launch (registers, spills, shared memory, warps, the tiles each tl.dot multiplies;
tutor.bench.facts), what they allow on
the card (tutor.bench.occupancy), the kernels each call ran (the profiler), and the measured
times (GPU time per call in a CUDA graph, and the per-call time that adds the host's launch
cost). Nothing here reads source text or times anything: these are pure functions of recorded
facts, so they are tested on the CPU with facts recorded on an H200.

A finding's text is in the active language (tutor.lang.i18n: the bench process is told the
learner's); its id and numbers are the same in every language, as `--json` promises.

The yardstick is the reference solution when the learner's file is timed beside it, and torch
eager when the file is the reference itself. Every rule first needs the kernel to be slower
than the yardstick by SLOWER (GPU time); then the most specific evidence comes first:

    spills, no-tensor-cores, host-bound, extra-launches, small-tiles, small-blocks,
    too-few-programs, low-occupancy

(a call that launches far more kernels than its yardstick is explained by that before the
shape of any one launch is). Only when none of these holds does the time itself speak:
`extra-traffic` when the time at copy bandwidth implies far more bytes than the op needs.
A drill may add rules of its own (its recipe's `levers`, tutor.bench.recipe): checked first, or,
marked `residual`, only where the compile facts explain nothing. A kernel as
fast as the yardstick is `at-reference`, with no diagnosis; one slower with none of the
evidence gets `slower`, which says where its time goes instead of guessing why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tutor.bench.occupancy import BLOCKS, REGISTERS, SHARED, WARPS, Fit, occupancy
from tutor.lang.i18n import N_, _, ngettext

SLOWER = 1.15  # GPU time over the yardstick's before anything is claimed (runs vary ~3%)
AT_REFERENCE = "at-reference"
SLOWER_ID = "slower"
PERF_IDS = (
    "spills",
    "no-tensor-cores",
    "host-bound",
    "extra-launches",
    "small-tiles",
    "small-blocks",
    "too-few-programs",
    "low-occupancy",
    "extra-traffic",
)
HOST_RATIO = 1.5  # per-call time over GPU time: the host, not the GPU, sets the pace
HOST_EXCESS_US = 3.0
TILE_SHRINK = 4  # FLOPs per program a quarter of the yardstick's or less: small tiles
BLOCK_SHRINK = 8  # bytes per program an eighth of the yardstick's or less: small blocks
SMALL_BLOCK_BYTES = 16 * 1024
LOW_OCCUPANCY = 0.25  # resident warps over the SM's 64, at or below which latency shows
EXTRA_SHARE = 0.1  # kernels beyond the yardstick's that take this share of the GPU time
TRAFFIC_RATIO = 1.3  # time at copy bandwidth implies this many times the fewest bytes
# The names a finding may give a side (tutor.bench.coach.SIDES) and what limits occupancy
# (tutor.bench.occupancy): kept in English in the numbers, shown in the learner's language.
SIDE_NAMES = (N_("your kernel"), N_("the reference"), N_("torch eager"))
GRID_LIMITER = N_("the grid")
LIMITERS = {
    GRID_LIMITER: GRID_LIMITER,
    REGISTERS: N_("registers"),
    SHARED: N_("shared memory"),
    WARPS: N_("warps"),
    BLOCKS: N_("blocks"),
}


@dataclass
class Side:
    """One implementation's facts at one bench case."""

    name: str  # "your kernel", "the reference", "torch eager"
    per_call_us: float | None = None  # do_bench median: GPU time plus the host's cost
    graph_us: float | None = None  # GPU time per call (CUDA-graph replay)
    launches: list[dict[str, Any]] = field(default_factory=list)  # Triton launches
    kernels: list[dict[str, Any]] = field(default_factory=list)  # every GPU kernel (profiler)

    @property
    def time(self) -> float | None:
        """The GPU time when it was measured, else the per-call time."""
        return self.graph_us if self.graph_us is not None else self.per_call_us

    def gpu_us(self, kernel: str) -> float:
        return sum(k.get("us") or 0.0 for k in self.kernels if k.get("name") == kernel)

    @property
    def busy_us(self) -> float | None:
        """GPU time per call: from the CUDA graph, else the profiled kernels' sum (a call that
        synchronises cannot be captured in a graph)."""
        if self.graph_us is not None:
            return self.graph_us
        return sum(k.get("us") or 0.0 for k in self.kernels) or None

    @property
    def main(self) -> dict[str, Any] | None:
        """The launch that took the most GPU time (the most programs where times are unknown)."""
        if not self.launches:
            return None
        return max(
            self.launches,
            key=lambda launch: (self.gpu_us(launch.get("kernel", "")), launch.get("programs", 0)),
        )

    @property
    def launch_count(self) -> int:
        """Kernels per call: every GPU kernel when the profiler saw them, else Triton's."""
        return len(self.kernels) if self.kernels else len(self.launches)


@dataclass
class Case:
    """Everything the rules know about one bench case."""

    label: str
    mine: Side
    baseline: Side | None
    limits: dict[str, Any]
    bytes: int = 0  # the fewest bytes the op must move
    flops: float | None = None  # for compute-bound functions
    decode: bool = False
    copy_gbps: float | None = None
    launch_us: float | None = None
    launch_graph_us: float | None = None
    shape: dict[str, int] = field(default_factory=dict)
    function: str = ""
    others: list[Case] = field(default_factory=list)  # the drill's other cases (same report)

    def fit(self, side: Side) -> Fit | None:
        main = side.main
        return occupancy(main, self.limits) if main else None

    @property
    def ratio(self) -> float | None:
        """The learner's GPU time over the yardstick's (2.0: twice as slow)."""
        if self.baseline is None:
            return None
        mine, base = self.mine.time, self.baseline.time
        return mine / base if mine and base else None


@dataclass(frozen=True)
class Finding:
    """One perf diagnosis and the numbers that prove it (the hints quote them)."""

    id: str
    text: str  # one or two sentences for the learner, with their numbers
    numbers: dict[str, Any] = field(default_factory=dict)


Rule = Callable[[Case], "Finding | None"]


def residual(rule: Rule) -> Rule:
    """Mark a drill's lever that reads the times (or the code) rather than the launch facts:
    it is checked only when no rule on the compile facts names a cause, before extra-traffic."""
    rule.residual = True  # type: ignore[attr-defined]
    return rule


def diagnose(case: Case, levers: tuple[Rule, ...] = ()) -> list[Finding]:
    """Every perf diagnosis the evidence supports, most specific first; [] when none is due.

    `levers` are the drill's own rules: checked first (they name the drill's known lever),
    or, marked `residual`, only when the compile facts explain nothing.
    """
    ratio = case.ratio
    if ratio is None or ratio < SLOWER:
        return []
    late = tuple(rule for rule in levers if getattr(rule, "residual", False))
    first = tuple(rule for rule in levers if rule not in late)
    by_facts = _found(case, RULES)
    # When the compile facts explain nothing, the drill's residual levers may; then the time.
    found = _found(case, first) + (by_facts or _found(case, late))
    return found or _found(case, RESIDUAL) or [_slower(case)]


def _found(case: Case, rules: tuple[Rule, ...]) -> list[Finding]:
    return [finding for rule in rules if (finding := rule(case)) is not None]


def verdict(case: Case, findings: list[Finding]) -> str:
    """The first diagnosis, or `at-reference` when the kernel is as fast as its yardstick."""
    return findings[0].id if findings else AT_REFERENCE


# ---- the rules ----------------------------------------------------------------------------------


def common_numbers(case: Case) -> dict[str, Any]:
    """What every finding quotes: both times, their ratio, the yardstick, the SMs."""
    base = case.baseline
    return {
        "us": _round(case.mine.time),
        "ref_us": _round(base.time if base else None),
        "ratio": _round(case.ratio, 2),
        "yardstick": base.name if base else "",
        "sms": case.limits.get("sms"),
    }


def spills(case: Case) -> Finding | None:
    main = case.mine.main
    if not main or not main.get("n_spills"):
        return None
    base_main = case.baseline.main if case.baseline else None
    if base_main and (base_main.get("n_spills") or 0) >= main["n_spills"]:
        return None
    numbers = {
        **common_numbers(case),
        "kernel": main.get("kernel"),
        "n_spills": main["n_spills"],
        "spill_bytes": main["n_spills"] * 4,
        "n_regs": main.get("n_regs"),
        "num_warps": main.get("num_warps"),
        "ref_spills": base_main.get("n_spills") if base_main else None,
    }
    return Finding(
        "spills",
        _(
            "{kernel} spills: each thread keeps {spill_bytes} bytes in local memory (slow DRAM "
            "behind the L1): {n_regs} registers a thread, at {warps}, could not hold its values."
        ).format(**numbers, warps=_warps(numbers["num_warps"])),
        numbers,
    )


def no_tensor_cores(case: Case) -> Finding | None:
    main = case.mine.main
    if not case.flops or not main or main.get("tensor_cores") is not False:
        return None
    base_main = case.baseline.main if case.baseline else None
    if base_main and base_main.get("tensor_cores") is False:
        return None  # the yardstick has none either: not what makes the difference
    numbers = {**common_numbers(case), "kernel": main.get("kernel"), "tflops": _tflops(case)}
    return Finding(
        "no-tensor-cores",
        _(
            "{kernel} has no tensor-core instruction (no mma in its PTX): its multiply-adds run "
            "on the ordinary FP32 units, at {tflops} TFLOP/s."
        ).format(**numbers),
        numbers,
    )


def small_tiles(case: Case) -> Finding | None:
    mine, base = case.mine.main, case.baseline.main if case.baseline else None
    if not case.flops or not mine or not base or not mine.get("tensor_cores"):
        return None
    tile, base_tile = dot_tile(mine), dot_tile(base)
    if tile and base_tile:
        return _small_dot_tiles(case, mine, tile, base_tile)
    sms = case.limits.get("sms")
    if sms and base["programs"] <= sms:
        # Without the IR's tile shapes, a yardstick with no more programs than SMs may be
        # persistent (each program walking several tiles): its programs do not count its tiles.
        return None
    per, base_per = case.flops / max(mine["programs"], 1), case.flops / max(base["programs"], 1)
    if per * TILE_SHRINK > base_per:
        return None
    numbers = {
        **common_numbers(case),
        "kernel": mine.get("kernel"),
        "programs": mine["programs"],
        "ref_programs": base["programs"],
        "tile_ratio": round(base_per / per, 1),
    }
    return Finding(
        "small-tiles",
        _(
            "{kernel} splits the output into {programs} tiles where the reference uses "
            "{ref_programs}: each tile does {tile_ratio}x less work, so it loads its inputs "
            "more often for each multiply-add."
        ).format(**numbers),
        numbers,
    )


def dot_tile(launch: dict[str, Any]) -> list[int] | None:
    """The [M, N, K] of a launch's largest tl.dot output tile, from its Triton IR."""
    tiles = launch.get("dot_tiles")
    return max(tiles, key=lambda t: t[0] * t[1]) if tiles else None


def _small_dot_tiles(
    case: Case, mine: dict[str, Any], tile: list[int], base_tile: list[int]
) -> Finding | None:
    """small-tiles from the tile shapes each tl.dot multiplies (a persistent grid's too)."""
    (m, n, _k), (base_m, base_n, _base_k) = tile, base_tile
    if m * n * TILE_SHRINK > base_m * base_n:
        return None
    # An m x n tile reads m + n inputs per step along K for m * n multiply-adds: over the whole
    # product the inputs are read (1/m + 1/n) * M * N * K times.
    loads = (1 / m + 1 / n) / (1 / base_m + 1 / base_n)
    numbers = {
        **common_numbers(case),
        "kernel": mine.get("kernel"),
        "tile": f"{m}x{n}",
        "ref_tile": f"{base_m}x{base_n}",
        "tile_ratio": round(base_m * base_n / (m * n), 1),
        "load_ratio": round(loads, 1),
    }
    return Finding(
        "small-tiles",
        _(
            "{kernel} multiplies {tile} output tiles where the reference multiplies "
            "{ref_tile}: each tile does {tile_ratio}x less work, and over the whole product "
            "your kernel reads its inputs {load_ratio}x as often."
        ).format(**numbers),
        numbers,
    )


def small_blocks(case: Case) -> Finding | None:
    mine, base = case.mine.main, case.baseline.main if case.baseline else None
    if case.flops or case.decode or not case.bytes or not mine or not base:
        return None
    per, base_per = case.bytes / max(mine["programs"], 1), case.bytes / max(base["programs"], 1)
    if per >= SMALL_BLOCK_BYTES or per * BLOCK_SHRINK > base_per:
        return None
    numbers = {
        **common_numbers(case),
        "kernel": mine.get("kernel"),
        "programs": mine["programs"],
        "ref_programs": base["programs"],
        "bytes_per_program": round(per),
        "ref_bytes_per_program": round(base_per),
    }
    return Finding(
        "small-blocks",
        _(
            "{kernel} launches {programs} programs that move about {size} each (the reference: "
            "{ref_programs} of {ref_size}): starting a program, computing its offsets and its "
            "masks costs as much as the bytes."
        ).format(**numbers, size=_size(per), ref_size=_size(base_per)),
        numbers,
    )


def too_few_programs(case: Case) -> Finding | None:
    main, fit = case.mine.main, case.fit(case.mine)
    if not main or fit is None or fit.programs_per_sm == 0:
        return None
    base_fit = case.fit(case.baseline) if case.baseline else None
    numbers = {
        **common_numbers(case),
        "kernel": main.get("kernel"),
        "programs": fit.programs,
        "sms": fit.sms,
        "programs_per_sm": fit.programs_per_sm,
        "waves": fit.waves,
        "last_wave_pct": round(100 * fit.last_wave_fill),
        "ref_programs": base_fit.programs if base_fit else None,
    }
    if fit.programs < fit.sms and (base_fit is None or base_fit.programs >= fit.sms):
        return Finding(
            "too-few-programs",
            _(
                "{kernel} launches {programs} programs for {sms} SMs: "
                "{idle} SMs have nothing to do."
            ).format(**numbers, idle=fit.sms - fit.programs),
            numbers,
        )
    tail = 1 <= fit.full_waves and fit.waves < 3 and fit.last_wave_fill < 0.5
    base_tail = base_fit is not None and base_fit.waves < 3 and base_fit.last_wave_fill < 0.5
    if tail and not base_tail and fit.programs_per_sm * fit.sms * fit.full_waves != fit.programs:
        return Finding(
            "too-few-programs",
            ngettext(
                "{kernel}'s {programs} programs fill {full_waves} wave of {per_wave} and then a "
                "last wave only {last_wave_pct}% full: that wave takes as long as a full one.",
                "{kernel}'s {programs} programs fill {full_waves} waves of {per_wave} and then a "
                "last wave only {last_wave_pct}% full: that wave takes as long as a full one.",
                fit.full_waves,
            ).format(**numbers, full_waves=fit.full_waves, per_wave=fit.sms * fit.programs_per_sm),
            numbers,
        )
    return None


def low_occupancy(case: Case) -> Finding | None:
    main, fit = case.mine.main, case.fit(case.mine)
    if not main or fit is None or fit.programs < fit.sms:
        return None  # fewer programs than SMs is too-few-programs' to name
    warps = fit.resident_warps
    if warps > LOW_OCCUPANCY * fit.max_warps_per_sm:
        return None
    base_fit = case.fit(case.baseline) if case.baseline else None
    if base_fit is None or base_fit.resident_warps < 2 * warps:
        return None  # the yardstick runs as few warps: not what makes the difference
    by_grid = fit.programs < fit.sms * fit.programs_per_sm
    numbers = {
        **common_numbers(case),
        "kernel": main.get("kernel"),
        "programs_per_sm": fit.programs_per_sm,
        "warps_per_sm": warps,
        "ref_warps_per_sm": base_fit.resident_warps,
        "limiter": GRID_LIMITER if by_grid else fit.limiter,
        "n_regs": main.get("n_regs"),
        "num_warps": main.get("num_warps"),
        "shared_kb": round((main.get("shared") or 0) / 1024, 1),
        "occupancy_pct": round(100 * warps / fit.max_warps_per_sm),
    }
    why = (
        _("the grid gives each SM {per_sm:.1f} programs").format(per_sm=fit.programs / fit.sms)
        if by_grid
        else ngettext(
            "only {n} program fits, limited by {limiter}",
            "only {n} programs fit, limited by {limiter}",
            fit.programs_per_sm,
        ).format(n=fit.programs_per_sm, limiter=_(LIMITERS.get(fit.limiter, fit.limiter)))
    )
    return Finding(
        "low-occupancy",
        _(
            "{kernel} keeps {warps_per_sm} warps on an SM where {yardstick} keeps "
            "{ref_warps_per_sm} (of {most}): {why}, of {warps} each, too few to keep enough "
            "loads in flight."
        ).format(
            **{**numbers, "yardstick": side_name(case.baseline.name)},
            most=fit.max_warps_per_sm,
            why=why,
            warps=_warps(numbers["num_warps"]),
        ),
        numbers,
    )


def host_bound(case: Case) -> Finding | None:
    mine, base = case.mine, case.baseline
    busy = mine.busy_us
    if mine.per_call_us is None or busy is None:
        return None
    overhead = mine.per_call_us - busy
    if mine.per_call_us < HOST_RATIO * busy or overhead < HOST_EXCESS_US:
        return None
    base_busy = base.busy_us if base is not None else None
    if base is not None and base.per_call_us is not None and base_busy is not None:
        if base.per_call_us - base_busy >= overhead / 2:
            return None  # the yardstick pays the same: the shape is launch-bound, not the code
    syncs = [k["name"] for k in mine.kernels if "memcpy" in k["name"].lower()]
    numbers = {
        **common_numbers(case),
        "call_us": _round(mine.per_call_us),
        "gpu_us": _round(busy),
        "host_us": _round(overhead),
        "launches": mine.launch_count,
        "copies": len(syncs),
        "launch_us": _round(case.launch_us),
    }
    return Finding(
        "host-bound",
        (
            ngettext(
                "each call takes {call_us} µs but keeps the GPU busy for only {gpu_us} µs: "
                "{host_us} µs go to Python and launching ({launches} kernels per call, {copies} "
                "copy between host and GPU).",
                "each call takes {call_us} µs but keeps the GPU busy for only {gpu_us} µs: "
                "{host_us} µs go to Python and launching ({launches} kernels per call, {copies} "
                "copies between host and GPU).",
                len(syncs),
            )
            if syncs
            else _(
                "each call takes {call_us} µs but keeps the GPU busy for only {gpu_us} µs: "
                "{host_us} µs go to Python and launching ({launches} kernels per call)."
            )
        ).format(**numbers),
        numbers,
    )


def extra_launches(case: Case) -> Finding | None:
    mine, base = case.mine, case.baseline
    if base is None or mine.launch_count <= base.launch_count:
        return None
    base_names = [k["name"] for k in base.kernels]
    extra = [k for k in mine.kernels if not _take(base_names, k["name"])]
    extra_time = sum(k.get("us") or 0.0 for k in extra)
    busy = mine.busy_us or 0.0
    if mine.launch_count < 2 * base.launch_count and extra_time < EXTRA_SHARE * busy:
        return None  # one more tiny kernel is not what makes it slow
    shown = ", ".join(f"{_kernel_name(k['name'])} ({k['us']:.1f} µs)" for k in extra[:4])
    numbers = {
        **common_numbers(case),
        "launches": mine.launch_count,
        "ref_launches": base.launch_count,
        "extra_kernels": shown,
        "extra_us": _round(extra_time),
    }
    return Finding(
        "extra-launches",
        (
            _(
                "each call runs {launches} kernels where {yardstick} runs {ref_launches}: "
                "also {extra}."
            )
            if shown
            else _("each call runs {launches} kernels where {yardstick} runs {ref_launches}.")
        ).format(**{**numbers, "yardstick": side_name(base.name)}, extra=shown),
        numbers,
    )


def traffic_ratio(case: Case, side: Side | None) -> float | None:
    """The bytes `side`'s GPU time would move at copy bandwidth, over the fewest the op needs
    (1.0: as fast as a copy of the op's bytes; 1.5: the time of half as many bytes again)."""
    if side is None or case.flops or case.decode or not case.bytes or not case.copy_gbps:
        return None
    gpu = side.graph_us or side.per_call_us
    return case.copy_gbps * 1e3 * gpu / case.bytes if gpu else None


def traffic_numbers(case: Case) -> dict[str, Any]:
    """The learner's time as bytes at copy bandwidth, for a finding's text and its hints."""
    ratio = traffic_ratio(case, case.mine) or 0.0
    return {
        **common_numbers(case),
        "implied_mb": round(ratio * case.bytes / 2**20, 1),
        "fewest_mb": round(case.bytes / 2**20, 1),
        "traffic_ratio": round(ratio, 2),
        "pct_copy": round(100 / ratio) if ratio else None,
    }


def extra_traffic(case: Case) -> Finding | None:
    ratio = traffic_ratio(case, case.mine)
    if ratio is None or ratio < TRAFFIC_RATIO:
        return None
    numbers = traffic_numbers(case)
    return Finding(
        "extra-traffic",
        _(
            "in {us} µs the card can move {implied_mb} MB; this op needs only {fewest_mb} MB "
            "({pct_copy}% of copy bandwidth), and nothing in the compile facts explains the gap: "
            "the kernel likely moves more bytes than it must (an input read twice, a strided "
            "read, an fp32 round trip)."
        ).format(**numbers),
        numbers,
    )


def _slower(case: Case) -> Finding:
    numbers = common_numbers(case)
    mine = ", ".join(f"{_kernel_name(k['name'])} {k['us']:.1f} µs" for k in case.mine.kernels[:4])
    numbers["kernels"] = mine
    return Finding(
        SLOWER_ID,
        _(
            "{ratio}x the time of {yardstick}, and the compile facts show no cause: no spills, "
            "the same occupancy and launches."
        ).format(ratio=numbers["ratio"], yardstick=side_name(numbers["yardstick"]))
        + (_(" Where the time goes: {kernels}.").format(kernels=mine) if mine else ""),
        numbers,
    )


RULES: tuple[Rule, ...] = (
    spills,
    no_tensor_cores,
    host_bound,
    extra_launches,
    small_tiles,
    small_blocks,
    too_few_programs,
    low_occupancy,
)
RESIDUAL: tuple[Rule, ...] = (extra_traffic,)  # claimed only when no rule above explains it


# ---- small helpers ------------------------------------------------------------------------------


def _take(names: list[str], name: str) -> bool:
    """Remove one `name` from `names` (a kernel both sides run); False if it was not there."""
    if name in names:
        names.remove(name)
        return True
    return False


def side_name(name: str) -> str:
    """A side's name ("the reference", `Side.name`) in the active language."""
    return _(name) if name in SIDE_NAMES else name


def shown(value: Any) -> str:
    """A finding's number as a hint quotes it: the English words among them (a side's name,
    what limits occupancy) in the active language, the rest as they are."""
    if isinstance(value, str) and (value in SIDE_NAMES or value in LIMITERS):
        return _(value)
    return str(value)


def _warps(n: int | None) -> str:
    """`1 warp`, `8 warps`."""
    return ngettext("{n} warp", "{n} warps", n or 0).format(n=n)


def _kernel_name(name: str) -> str:
    """`void at::native::elementwise_kernel<...>(...)` -> `elementwise_kernel` (torch's)."""
    head = name.split("(")[0].split("<")[0].strip()
    return head.split("::")[-1].removeprefix("void ").strip() or name[:40]


def _tflops(case: Case) -> float | None:
    gpu = case.mine.time
    return round(case.flops / (gpu * 1e-6) / 1e12, 1) if case.flops and gpu else None


def _size(nbytes: float) -> str:
    return f"{nbytes / 1024:.1f} KB" if nbytes >= 1024 else f"{nbytes:.0f} B"


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)
