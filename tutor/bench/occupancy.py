"""How many programs of a launch an SM holds at once, what limits it, and the waves of a grid.

    fit = occupancy(launch, limits)   # launch and limits as tutor.bench.facts reads them
    fit.programs_per_sm, fit.limiter  # 2, "registers"
    fit.waves, fit.last_wave_fill     # 1.06, 0.06  (140 programs on 132 SMs, one per SM)

Pure arithmetic on the facts, as NVIDIA's occupancy calculator does it: registers are given per
warp in units of 256 (a thread's count rounded up), shared memory per block with 1 KB the driver
keeps, and an SM holds at most 64 warps (2048 threads) and 32 blocks on Hopper. A "program" is a
Triton program instance, which is one CUDA block.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

REGISTERS, SHARED, WARPS, BLOCKS = "registers", "shared memory", "warps", "blocks"


@dataclass(frozen=True)
class Fit:
    programs_per_sm: int  # 0 when the program cannot run at all (more than the SM has)
    limiter: str  # what stops one more program per SM: REGISTERS, SHARED, WARPS or BLOCKS
    warps_per_sm: int  # warps resident per SM when every SM is full
    max_warps_per_sm: int
    programs: int  # programs in the launch
    sms: int
    waves: float  # programs / (SMs x programs per SM)
    full_waves: int
    last_wave_fill: float  # how full the last wave is, 0..1 (1.0 when the waves are whole)
    sms_used: int  # SMs with at least one program when the grid is smaller than one wave

    @property
    def resident_warps(self) -> int:
        """Warps an SM holds for this launch: as many programs as fit, or as the grid gives
        it (a persistent grid of one program per SM holds that one program's warps)."""
        if not self.programs_per_sm or not self.sms:
            return 0
        per_sm = min(self.programs_per_sm, math.ceil(self.programs / self.sms))
        return per_sm * (self.warps_per_sm // self.programs_per_sm)

    @property
    def occupancy(self) -> float:
        """Resident warps over the most an SM can hold (0..1)."""
        return self.warps_per_sm / self.max_warps_per_sm if self.max_warps_per_sm else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "occupancy": round(self.occupancy, 3),
            "resident_warps": self.resident_warps,
        }


def occupancy(launch: dict[str, Any], limits: dict[str, Any]) -> Fit | None:
    """The fit of `launch` on the card of `limits`; None when a fact it needs is missing."""
    regs, warps = launch.get("n_regs"), launch.get("num_warps")
    sms, programs = limits.get("sms"), launch.get("programs")
    if not regs or not warps or not sms or programs is None:
        return None
    warp_size = limits.get("warp_size") or 32
    max_warps = (limits.get("max_threads_per_sm") or 2048) // warp_size
    unit = limits.get("register_unit") or 256
    regs_per_warp = math.ceil(regs * warp_size / unit) * unit
    by = {
        REGISTERS: (limits.get("regs_per_sm") or 65536) // (regs_per_warp * warps),
        WARPS: max_warps // warps,
        BLOCKS: limits.get("max_blocks_per_sm") or 32,
    }
    shared = launch.get("shared") or 0
    if shared and limits.get("shared_per_sm"):
        per_block = shared + (limits.get("reserved_shared_per_block") or 0)
        by[SHARED] = limits["shared_per_sm"] // per_block
    limiter = min(by, key=lambda name: (by[name], list(by).index(name)))
    per_sm = by[limiter]
    per_wave = sms * per_sm
    if per_wave <= 0:
        return Fit(0, limiter, 0, max_warps, programs, sms, math.inf, 0, 0.0, 0)
    waves = programs / per_wave
    full = programs // per_wave
    rest = programs - full * per_wave
    fill = 1.0 if rest == 0 else rest / per_wave
    return Fit(
        programs_per_sm=per_sm,
        limiter=limiter,
        warps_per_sm=per_sm * warps,
        max_warps_per_sm=max_warps,
        programs=programs,
        sms=sms,
        waves=round(waves, 3),
        full_waves=full,
        last_wave_fill=round(fill, 3),
        sms_used=min(sms, programs),
    )
