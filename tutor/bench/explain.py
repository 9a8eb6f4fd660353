"""The perf coach in words: each timed case's verdict, and its launch facts side by side.

    lines = coach_lines(row)                  # "softmax m=4096 n=8192: spills — ... (1.65x)"
    lines = facts_table(row, report.limits)   # registers, spills, warps, grid, waves: yours
                                              # beside the reference's

Plain text for the command line and the app's Bench tab; nothing here measures or judges
(tutor.bench.rules did), it only shows the facts the judgement rests on.
"""

from __future__ import annotations

from typing import Any

from tutor.bench.occupancy import occupancy
from tutor.bench.record import MINE, REFERENCE, BenchRow
from tutor.bench.rules import Side, shown, side_name
from tutor.lang import cells as cell_width
from tutor.lang.i18n import N_, _

SIDES = ((MINE, N_("yours")), (REFERENCE, N_("reference")))
LABEL_WIDTH = 26
CELL_WIDTH = 24


def verdict_line(row: BenchRow) -> str:
    """One line: the case, its first perf diagnosis (or "at the reference"), the time ratio,
    and for a matmul-like case its share of the card's matmul rate."""
    ratio = (
        _(" ({ratio}x the time of {yardstick})").format(
            ratio=f"{row.perf_ratio:.2f}",
            yardstick=side_name(row.yardstick or ""),
        )
        if row.perf_ratio
        else ""
    )
    if row.rates.tflops and row.rates.pct_matmul:
        ratio += _(", {tflops} TFLOP/s = {pct}% of the card's bf16 matmul").format(
            tflops=f"{row.rates.tflops:.0f}", pct=f"{row.rates.pct_matmul:.0f}"
        )
    if not row.perf_verdict:
        return _("{case}: no yardstick timed, so no verdict").format(case=row.short_label)
    if not row.perf:
        return _("{case}: at the reference's speed{ratio}").format(
            case=row.short_label, ratio=ratio
        )
    return f"{row.short_label}: {row.perf[0]['id']}{ratio}"


def coach_lines(row: BenchRow) -> list[str]:
    """The verdict and, for a slow case, what the evidence says (each diagnosis, first first)."""
    lines = [verdict_line(row)]
    for number, finding in enumerate(row.perf):
        lead = "  " if number == 0 else "  " + _("also: ")
        lines.append(f"{lead}{finding['text']}")
    return lines


def facts_table(row: BenchRow, limits: dict[str, Any]) -> list[str]:
    """The main launch of each side as a small table; [] when no facts were read."""
    sides = [(_(title), _main(row.facts.get(name, {}))) for name, title in SIDES]
    sides = [
        (title, launch, row.facts.get(name, {}))
        for (title, launch), (name, _) in zip(sides, SIDES, strict=True)
        if launch is not None
    ]
    if not sides:
        return []
    fits = [occupancy(launch, limits) if limits else None for _, launch, _ in sides]
    rows = [
        (N_("kernel"), [launch.get("kernel", "?") for _, launch, _ in sides]),
        (
            N_("registers / spills"),
            [
                f"{_n(launch.get('n_regs'))} / {_n(launch.get('n_spills'))}"
                for _, launch, _ in sides
            ],
        ),
        (
            N_("warps, stages"),
            [
                f"{_n(launch.get('num_warps'))}, {_n(launch.get('num_stages'))}"
                for _, launch, _ in sides
            ],
        ),
        (N_("shared memory"), [_kb(launch.get("shared")) for _, launch, _ in sides]),
        (
            N_("tl.dot tiles (M x N x K)"),
            [_tiles(launch.get("dot_tiles")) for _, launch, _ in sides],
        ),
        (
            N_("programs (grid)"),
            [
                f"{launch.get('programs', '?')} {tuple(launch.get('grid', []))}"
                for _, launch, _ in sides
            ],
        ),
        (
            N_("programs per SM"),
            [f"{fit.programs_per_sm} ({shown(fit.limiter)})" if fit else "?" for fit in fits],
        ),
        (
            N_("warps on an SM"),
            [
                _("{resident} of {most}").format(
                    resident=fit.resident_warps, most=fit.max_warps_per_sm
                )
                if fit
                else "?"
                for fit in fits
            ],
        ),
        (
            N_("waves (last one full)"),
            [f"{fit.waves:g} ({fit.last_wave_fill:.0%})" if fit else "?" for fit in fits],
        ),
        (
            N_("GPU kernels per call"),
            [
                str(len(facts.get("kernels", [])) or len(facts.get("launches", [])))
                for _, _, facts in sides
            ],
        ),
    ]
    # a kernel without tl.dot (or facts read before tiles were) has no tile row
    rows = [(label, cells) for label, cells in rows if any(cell != "" for cell in cells)]
    head = "  " + cell_width.ljust(_("launch facts"), LABEL_WIDTH)
    head += "".join(cell_width.ljust(title, CELL_WIDTH) for title, _, _ in sides)
    lines = [head]
    for label, cells in rows:
        lines.append(
            "  "
            + cell_width.ljust(_(label), LABEL_WIDTH)
            + "".join(cell_width.ljust(_cut(cell), CELL_WIDTH) for cell in cells)
        )
    return lines


def _tiles(tiles: list[list[int]] | None) -> str:
    """`128x256x64` for each tl.dot the kernel does (attention has two); "" for none."""
    return ", ".join("x".join(str(d) for d in tile) for tile in tiles or [])


def _main(facts: dict[str, Any]) -> dict[str, Any] | None:
    """The launch that took the most GPU time, as the rules read it."""
    launches = [launch for launch in facts.get("launches", []) if "error" not in launch]
    return Side("", launches=launches, kernels=list(facts.get("kernels", []))).main


def _n(value: Any) -> str:
    return "?" if value is None else str(value)


def _kb(nbytes: int | None) -> str:
    return "?" if nbytes is None else f"{nbytes / 1024:.1f} KB"


def _cut(text: str) -> str:
    return text if len(text) < CELL_WIDTH - 1 else text[: CELL_WIDTH - 2] + "…"
