#!/usr/bin/env python3
"""Which tiles does m3's attention want under sustained load, against SDPA in the same graphs?

    python scripts/probe_attention_tiles.py [--out DIR]     # GPU: a table, and JSON in DIR
    TRITON_INTERPRET=1 python scripts/probe_attention_tiles.py --check   # CPU: the outputs

The whole report of 2026-12-06 (H100, CUDA graphs in turn) had the solution at 88.5% / 88.2%
of SDPA at S = 4096 (causal after the slash) and 75.3% / 87.0% at S = 1024, where probe_tma.py's
one-off timings had S = 1024 at 145 µs and the report 164: the tiles were chosen on a card that
had not warmed up. Here the solution's own kernel runs with each tile config in turn with SDPA
(tutor.bench.timing.graphs_us: untimed replays until the clock settles, then in rotation), at
b4 h32 d128 bf16, inputs rotated past the L2. Only `_config` changes; the kernel is the
solution's, which wants BLOCK_M a multiple of BLOCK_N (a causal program's unmasked key blocks
end where its query block starts).
"""

# ruff: noqa: B023 - each lambda is timed at once, inside the loop that defines it
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
from tune_sweep import load_solution, probe_main  # noqa: E402 - the scripts folder is on the path

from tutor.bench.recipe import clone_inputs, load_recipes  # noqa: E402
from tutor.bench.timing import graph_input_sets, graphs_us, l2_bytes  # noqa: E402

DTYPE = "bfloat16"
SHAPES = tuple(
    {"b": 4, "h": 32, "s": s, "d": 128, "causal": causal} for s in (1024, 4096) for causal in (0, 1)
)
# (BLOCK_M, BLOCK_N, num_warps, num_stages)
TILES = (
    (64, 64, 4, 3),
    (64, 64, 4, 4),
    (128, 64, 4, 3),
    (128, 64, 8, 3),
    (128, 128, 8, 2),
    (128, 128, 8, 3),
    (128, 128, 8, 4),
)


def with_tiles(module, tiles):
    """The solution's `attention` with `_config` fixed to `tiles` for the call."""

    def call(q, k, v, causal):
        chosen = module._config
        module._config = lambda *args: module.Config(*tiles)
        try:
            return module.attention(q, k, v, causal=causal)
        finally:
            module._config = chosen

    return call


def timed(shape: dict, op, module) -> list[dict]:
    base = op.inputs(shape, DTYPE, "cuda")
    found = {"SDPA": op.eager, "solution": module.attention}
    found |= {"{}x{} w{} s{}".format(*tiles): with_tiles(module, tiles) for tiles in TILES}
    want = op.eager(*base).float()
    flops = op.flop_count(shape)
    count = graph_input_sets(op.bytes_moved(shape, DTYPE), l2_bytes())
    sets = [clone_inputs(base) for _ in range(count)]
    times, failed = graphs_us(
        {name: (lambda k, fn=fn: fn(*sets[k % count])) for name, fn in found.items()}
    )
    rows = []
    sdpa = times.get("SDPA")
    label = f"s={shape['s']} causal={shape['causal']}"
    for name, fn in found.items():
        us = times.get(name)
        diff = float((fn(*base).float() - want).abs().max()) if us else None
        share = sdpa / us if us and sdpa else None
        rows.append(
            {"shape": shape, "side": name, "graph_us": us, "of_sdpa": share, "max_diff": diff}
            | {"tflops": flops / us / 1e6 if us else None}
            | {"error": str(failed.get(name, ""))[:200] or None}
        )
        shown = f"{us:9.1f} µs {share:6.1%} of SDPA  max diff {diff:.1e}" if us else "failed"
        print(f"attention {label:<17} {name:<18} {shown}", flush=True)
    return rows


def check() -> int:
    module = load_solution("m3_attention")
    q, k, v = (torch.randn(1, 2, 40, 16) for _ in range(3))
    ok = True
    for causal in (False, True):
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for tiles in ((32, 16, 1, 1), (16, 16, 1, 1)):
            got = with_tiles(module, tiles)(q, k, v, causal)
            ok = ok and torch.allclose(got, want, atol=1e-4)
    print("every tile config computes attention" if ok else "a tile config is wrong")
    return 0 if ok else 1


def measure() -> list[dict]:
    op = load_recipes(ROOT / "drills" / "bench" / "m3.py")["attention"]
    module = load_solution("m3_attention")
    return [row for shape in SHAPES for row in timed(shape, op, module)]


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv, __doc__, check, measure, "probe-attention-tiles.json", "the outputs, CPU"
    )


if __name__ == "__main__":
    raise SystemExit(main())
