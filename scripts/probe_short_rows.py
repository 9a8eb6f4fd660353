#!/usr/bin/env python3
"""Why b2 (RMSNorm backward) and f6 (per-token quant) stay short of copy bandwidth on rows of
2048 columns (issue 27: b2 35.9%, f6 62.2% on the H200): the reference wrappers with other
launch settings, beside torch.compile, at 4096 x 2048 and, as a check that nothing gets worse,
at 4096 x 8192.

    python scripts/probe_short_rows.py [--out DIR]    # GPU: a table, probe-short-rows.json

b2 takes one program per SM of up to 32 warps, each looping over a group of rows with dw in
registers: at 2048 columns that is 8 warps an SM. The variants give each SM more programs
(`_programs_per_sm`) and other warp counts; its partial-dw buffer grows with the programs.
f6 takes one row per program; the variants change its warps.

Every time is GPU time per call in a CUDA graph whose calls rotate over enough input sets to
touch twice the L2 (tutor.bench.timing, as the bench times them); torch.compile of the recipe's
eager function is timed the same way in the same process. Outputs are checked against eager.
"""

# ruff: noqa: B023 - each lambda is timed at once, inside the loop that defines it
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
from tune_sweep import load_solution  # noqa: E402

from tutor.bench.recipe import clone_inputs, load_recipes, max_excess  # noqa: E402
from tutor.bench.timing import _copy_gbps, graph_input_sets, graph_us, l2_bytes  # noqa: E402

# b2's recipe names its dimensions m, n; f6's t, h
SHAPES = {"b2": ({"m": 4096, "n": 2048}, {"m": 4096, "n": 8192})}
SHAPES["f6"] = tuple({"t": s["m"], "h": s["n"]} for s in SHAPES["b2"])
B2_SETTINGS = [(p, w) for p in (1, 2, 4, 8) for w in (4, 8, 16, 32)]
F6_WARPS = (1, 2, 4, 8, 16)


def timed(recipe, shape, fn, reference) -> tuple[float, float]:
    """(µs per call in a graph, the worst |diff| over the recipe's tolerance: 1 is the limit)."""
    base = recipe.inputs(shape, "bfloat16", "cuda")
    fresh = clone_inputs(base)
    _, excess = max_excess(recipe.results(fresh, fn(*fresh)), reference, "bfloat16")
    count = graph_input_sets(recipe.bytes_moved(shape, "bfloat16"), l2_bytes())
    sets = [clone_inputs(base) for _ in range(count)]
    return graph_us(lambda k: fn(*sets[k % count])), excess


def probe(drill: str, solution: str, function: str, settings, apply, rows: list, gbps: float):
    recipe = load_recipes(ROOT / "drills" / "bench" / f"{drill}.py")[function]
    module = load_solution(solution)
    compiled = recipe.compiled_fn()
    for shape in SHAPES[drill]:
        base = recipe.inputs(shape, "bfloat16", "cuda")
        fresh = clone_inputs(base)
        reference = recipe.results(fresh, recipe.eager(*fresh))
        nbytes = recipe.bytes_moved(shape, "bfloat16")
        label = f"{drill} " + "x".join(str(v) for v in shape.values())

        def record(variant: str, fn) -> None:
            try:
                us, excess = timed(recipe, shape, fn, reference)
            except Exception as exc:  # noqa: BLE001 - a setting that cannot launch is a row too
                rows.append({"case": label, "variant": variant, "error": str(exc)[:200]})
                print(f"{label:18} {variant:28} failed: {str(exc)[:80]}", flush=True)
                return
            pct = 100.0 * nbytes / (us * 1e-6) / 1e9 / gbps
            rows.append({"case": label, "variant": variant, "us": us, "pct_copy": pct})
            ok = "ok" if excess <= 1 else f"WRONG, {excess:.3g}x the tolerance"
            print(f"{label:18} {variant:28} {us:8.2f} µs {pct:5.1f}% {ok}", flush=True)

        record("torch.compile", compiled)
        record("reference as it is", getattr(module, function))
        for setting in settings:
            with apply(module, setting) as name:
                record(name, getattr(module, function))


class _b2_setting:
    def __init__(self, module, setting):
        self.module, (self.programs, self.warps) = module, setting

    def __enter__(self):
        m = self.module
        self.saved = (m._programs_per_sm, m._num_warps)
        m._programs_per_sm = lambda block_n, p=self.programs: p
        m._num_warps = lambda block_n, w=self.warps: w
        return f"{self.programs} programs/SM, {self.warps} warps"

    def __exit__(self, *exc):
        self.module._programs_per_sm, self.module._num_warps = self.saved


class _f6_setting:
    def __init__(self, module, warps):
        self.module, self.warps = module, warps

    def __enter__(self):
        self.saved = self.module._num_warps
        self.module._num_warps = lambda block_h, w=self.warps: w
        return f"{self.warps} warps"

    def __exit__(self, *exc):
        self.module._num_warps = self.saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    gbps = _copy_gbps()
    print(f"{torch.cuda.get_device_name(0)}: copy {gbps:.0f} GB/s", flush=True)
    rows: list = []
    with torch.no_grad():
        probe(
            "b2", "b2_rmsnorm_backward", "rms_norm_backward", B2_SETTINGS, _b2_setting, rows, gbps
        )
        probe("f6", "f6_quant", "quant_per_token", F6_WARPS, _f6_setting, rows, gbps)
    if args.out:
        data = {"device": torch.cuda.get_device_name(0), "copy_gbps": gbps, "rows": rows}
        Path(args.out, "probe-short-rows.json").write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
