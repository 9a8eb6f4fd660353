"""The bench record: what a bench measured and judged, written to JSON and read from it here.

    record = BenchRecord(drill="t3", impl=path, status=BenchStatus.RUNNING)  # the bench process
    row = BenchRow(label="layer_norm m=4096 n=1000 bfloat16", bytes=..., ...)
    row.times.mine.per_call_us = 36.5      # do_bench median, the L2 flushed before each call
    row.times.mine.graph_us = 34.9         # GPU time per call, replayed in a CUDA graph
    record.rows.append(row)
    json.dump(record.to_json(), out)
    record = BenchRecord.from_json(json.load(file))   # `tutor bench`, the GPU report, bench.csv
    record.rows[0].rates.pct_copy          # derived on reading: GB/s, % of copy, TFLOP/s

Every time has one name: a case's sides (`SIDES`) each have a per-call time and a CUDA-graph
time (`SideTimes`), None where it was not measured.

- `mine`: the file under test (the learner's, or whichever `--impl` named)
- `reference`: the drill's reference solution, in the bench process
- `eager`: torch eager
- `compile`: torch.compile, in a fresh process of its own (tutor.bench.isolated)
- `reference_beside_compile`: the reference again, in compile's process, its graph timed in turn
  with compile's (graph only: "as fast as torch.compile" is judged on the two)
- `copy_floor`: decode shapes, a torch copy of the same bytes in a graph timed in turn with the
  kernels (graph only: the floor of their traffic)
- `sibling`: a CUDA C++ drill's Triton sibling (the recipe's `sibling`, named in the row's
  `sibling_as`), in compile's process, its graph timed in turn with compile's and the
  reference's there (graph only: "no slower than the Triton sibling" is judged on the two)

A side is timed when its per-call time was measured. The rates (`Rates`) are derived from the
times, the case's bytes or FLOPs and the card's anchors, by `BenchRecord.derive`, which
`from_json` calls: written for readers of `tutor bench --json`, computed again on reading.

The JSON carries `schema`. `from_json` reads this schema and the first, the bench process's
layout before this record (no `schema`; per-side dicts `us` and `graph_us`,
`reference_beside_compile_us` and `copy_floor_graph_us` beside them, `triton` at the top), in
which tests/data keeps the benches recorded on GPUs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tutor.states import BenchStatus

SCHEMA = 2  # 2: this record; 1: the bench process's own dicts, before it

MINE = "mine"
REFERENCE = "reference"
EAGER = "eager"
COMPILE = "compile"
REFERENCE_BESIDE_COMPILE = "reference_beside_compile"
COPY_FLOOR = "copy_floor"
SIBLING = "sibling"
SIDES = (MINE, REFERENCE, EAGER, COMPILE, REFERENCE_BESIDE_COMPILE, COPY_FLOOR, SIBLING)
# The sides in words, for notes and the perf coach (tutor.bench.rules translates the three it
# names; the bench process's notes are in English).
SHOWN = {
    MINE: "your kernel",
    REFERENCE: "the reference",
    EAGER: "torch eager",
    COMPILE: "torch.compile",
}


class RecordError(ValueError):
    """JSON that is not a bench record this tutor reads (one of a newer schema, say)."""


@dataclass
class SideTimes:
    """One side's times at one case, in microseconds; None = not measured."""

    per_call_us: float | None = None  # do_bench median, L2 flushed: GPU time + the host's cost
    graph_us: float | None = None  # GPU time per call in CUDA-graph replay, inputs past the L2

    @property
    def timed(self) -> bool:
        return self.per_call_us is not None

    @classmethod
    def from_json(cls, raw: Any) -> SideTimes:
        raw = raw if isinstance(raw, dict) else {}
        return cls(_number(raw.get("per_call_us")), _number(raw.get("graph_us")))


@dataclass
class CaseTimes:
    """Every side's times at one case (the module's docstring says what each side is)."""

    mine: SideTimes = field(default_factory=SideTimes)
    reference: SideTimes = field(default_factory=SideTimes)
    eager: SideTimes = field(default_factory=SideTimes)
    compile: SideTimes = field(default_factory=SideTimes)
    reference_beside_compile: SideTimes = field(default_factory=SideTimes)
    copy_floor: SideTimes = field(default_factory=SideTimes)
    sibling: SideTimes = field(default_factory=SideTimes)

    def of(self, side: str) -> SideTimes:
        if side not in SIDES:
            raise KeyError(side)
        return getattr(self, side)

    def per_call(self) -> dict[str, float]:
        """{side: per-call time} of the sides that have one."""
        return {s: t for s in SIDES if (t := self.of(s).per_call_us) is not None}

    def graph(self) -> dict[str, float]:
        """{side: GPU time in a CUDA graph} of the sides that have one."""
        return {s: t for s in SIDES if (t := self.of(s).graph_us) is not None}

    @classmethod
    def from_json(cls, raw: Any) -> CaseTimes:
        raw = raw if isinstance(raw, dict) else {}
        return cls(**{side: SideTimes.from_json(raw.get(side)) for side in SIDES})


@dataclass
class Rates:
    """The learner's (`mine`) rates at one case, derived from its times (`BenchRow.derive`)."""

    gbps: float | None = None  # the fewest bytes over the per-call time
    pct_copy: float | None = None  # gbps as a percentage of the card's copy bandwidth
    graph_gbps: float | None = None  # the fewest bytes over the GPU time in a CUDA graph
    graph_pct_copy: float | None = None
    tflops: float | None = None  # FLOPs of one call over the per-call time
    pct_matmul: float | None = None  # tflops as a percentage of the card's bf16 matmul rate


@dataclass
class BenchRow:
    """One bench case: what it is, each side's times, and what the perf coach made of them."""

    label: str
    function: str = ""
    shape: dict[str, int] = field(default_factory=dict)
    dtype: str = ""
    bytes: int = 0  # the fewest bytes read + written (the drill's bench recipe)
    flops: float | None = None  # floating-point operations of one call (compute-bound drills)
    target: float | None = None  # the recipe's target (% of copy, or share of eager's speed)
    decode: bool = False  # a few rows: the time is mostly launch overhead
    large: bool = False  # enough traffic that the target is a share of copy bandwidth
    rereads: bool = False  # the reference must read the rows twice (recipe.Recipe.rereads)
    compiled_as: str = ""  # what torch.compile's side ran, if not eager compiled (m3: flex)
    sibling_as: str = ""  # the Triton sibling's file, for a CUDA C++ drill (recipe.sibling)
    times: CaseTimes = field(default_factory=CaseTimes)
    graph_input_sets: int | None = None  # the inputs' copies a CUDA graph rotates over
    compile_s: float | None = None  # how long torch.compile took for this shape
    max_diff: dict[str, float | None] = field(default_factory=dict)  # side -> against eager
    errors: dict[str, str] = field(default_factory=dict)  # side (or "mine (graph)") -> why
    notes: list[str] = field(default_factory=list)
    # Each side's launches with their compile facts, and the GPU kernels of one call
    # (tutor.bench.facts); then the perf coach's judgement (tutor.bench.coach): the side the
    # learner's kernel is judged against, its GPU time over that side's, the perf diagnoses
    # ({"id", "text", "numbers"}, first first) and the first one's id, or "at-reference".
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    yardstick: str | None = None
    perf_ratio: float | None = None
    perf: list[dict[str, Any]] = field(default_factory=list)
    perf_verdict: str | None = None
    rates: Rates = field(default_factory=Rates)  # derived, never read from the JSON

    @property
    def short_label(self) -> str:
        """`softmax m=4096 n=1000`: the label without the dtype."""
        dims = " ".join(f"{k}={v}" for k, v in self.shape.items())
        return f"{self.function} {dims}".strip() or self.label

    def derive(self, copy_gbps: float | None, matmul_tflops: float | None) -> None:
        """The learner's rates from its times and the card's copy and matmul rates."""
        mine, rates = self.times.mine, Rates()
        if mine.per_call_us and self.bytes:
            rates.gbps = self.bytes / (mine.per_call_us * 1e-6) / 1e9
            rates.pct_copy = 100.0 * rates.gbps / copy_gbps if copy_gbps else None
        if mine.graph_us and self.bytes:
            rates.graph_gbps = self.bytes / (mine.graph_us * 1e-6) / 1e9
            rates.graph_pct_copy = 100.0 * rates.graph_gbps / copy_gbps if copy_gbps else None
        if mine.per_call_us and self.flops:
            rates.tflops = self.flops / (mine.per_call_us * 1e-6) / 1e12
            rates.pct_matmul = 100.0 * rates.tflops / matmul_tflops if matmul_tflops else None
        self.rates = rates

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any], schema: int = SCHEMA) -> BenchRow:
        times = _times_of_schema_1(raw) if schema == 1 else CaseTimes.from_json(raw.get("times"))
        return cls(
            label=str(raw.get("label", "?")),
            function=str(raw.get("function") or ""),
            shape=dict(raw.get("shape") or {}),
            dtype=str(raw.get("dtype") or ""),
            bytes=int(raw.get("bytes") or 0),
            flops=raw.get("flops"),
            target=raw.get("target"),
            decode=bool(raw.get("decode")),
            large=bool(raw.get("large")),
            rereads=bool(raw.get("rereads")),
            compiled_as=str(raw.get("compiled_as") or ""),
            sibling_as=str(raw.get("sibling_as") or ""),
            times=times,
            graph_input_sets=raw.get("graph_input_sets"),
            compile_s=raw.get("compile_s"),
            max_diff=dict(raw.get("max_diff") or {}),
            errors=dict(raw.get("errors") or {}),
            notes=list(raw.get("notes") or []),
            facts=dict(raw.get("facts") or {}),
            yardstick=raw.get("yardstick"),
            perf_ratio=raw.get("perf_ratio"),
            perf=list(raw.get("perf") or []),
            perf_verdict=raw.get("perf_verdict"),
        )


@dataclass
class BenchRecord:
    """A bench of one file: the card and software it ran on, the anchors, and every case.

    The bench process (tutor.bench.child) writes it, rewritten after every case; `tutor bench`
    reads it into a BenchReport (this record and how the bench was run)."""

    drill: str
    impl: str  # the file timed
    status: str  # a BenchStatus
    message: str = ""
    device: str = ""
    torch: str = ""
    versions: dict[str, str | None] = field(default_factory=dict)  # the kernel language's
    python: str = ""
    l2_bytes: int | None = None
    l2_flush: bool | None = None  # whether this triton's do_bench flushes the L2
    limits: dict[str, Any] = field(default_factory=dict)  # the card (tutor.bench.facts)
    # Measured once per card (tutor.bench.child keeps them in .tutor/bandwidth.json):
    copy_gbps: float | None = None  # device-to-device copy, bytes read + written
    launch_us: float | None = None  # an empty Triton kernel, do_bench median
    launch_graph_us: float | None = None  # the same in a CUDA graph
    matmul_tflops: float | None = None  # dense bf16 matmul through torch (cuBLAS), 8192^3
    reference_is_impl: bool = False  # the file timed is the reference: timed once, as both
    rows: list[BenchRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    traceback: str = ""  # where the bench process broke, when it did

    def derive(self) -> None:
        """Every case's rates, from its times and this card's anchors."""
        for row in self.rows:
            row.derive(self.copy_gbps, self.matmul_tflops)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> BenchRecord:
        """The record in `data` (this schema or the first), its rates derived."""
        if not isinstance(data, dict):
            raise RecordError("a bench record is a JSON object")
        schema = data.get("schema", 1)
        if schema not in (1, SCHEMA):
            raise RecordError(f"bench record schema {schema!r}: this tutor reads 1 and {SCHEMA}")
        found: dict[str, Any] = {
            f.name: data[f.name]
            for f in fields(BenchRecord)
            if f.name not in ("rows", "versions") and data.get(f.name) is not None
        }
        found.setdefault("drill", "")
        found.setdefault("impl", "")
        found.setdefault("status", BenchStatus.ERROR)
        found["limits"] = dict(found.get("limits") or {})
        found["notes"] = list(found.get("notes") or [])
        if schema == 1:
            versions = {"triton": data["triton"]} if "triton" in data else {}
        else:
            versions = dict(data.get("versions") or {})
        rows = [BenchRow.from_json(raw, schema) for raw in data.get("rows") or []]
        record = BenchRecord(**found, versions=versions, rows=rows)
        record.derive()
        return record


def _times_of_schema_1(raw: dict[str, Any]) -> CaseTimes:
    """A row of the bench process's layout before this record, as this record's times."""
    per_call, graph = raw.get("us") or {}, raw.get("graph_us") or {}
    times = CaseTimes(
        **{
            side: SideTimes(_number(per_call.get(side)), _number(graph.get(side)))
            for side in (MINE, REFERENCE, EAGER, COMPILE)
        }
    )
    times.reference_beside_compile.graph_us = _number(raw.get("reference_beside_compile_us"))
    times.copy_floor.graph_us = _number(raw.get("copy_floor_graph_us"))
    return times


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
