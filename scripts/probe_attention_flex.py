#!/usr/bin/env python3
"""m3's solution against torch's own Triton attention (flex_attention), beside SDPA.

    python scripts/probe_attention_flex.py [--autotune] [--out DIR]     # GPU: a table, JSON

SDPA on an H100 is a warp-specialized CUDA kernel (cuDNN or FlashAttention): a producer warp
loads the tiles while two consumer warpgroups take turns at the tensor cores. Plain `tl` on
Triton 3.6 cannot ask for that (scripts/probe_attention_ws.py: its warp specialization gives
wrong results for attention on sm_90, and does not compile causal). The fastest attention
written in Triton that a torch user has is flex_attention compiled by Inductor, from its own
tuned template: this times it in turn with SDPA and the solution (CUDA graphs,
tutor.bench.timing.graphs_us) at m3's bench shapes, b4 h32 d128 bf16, causal through a block
mask made once beforehand, as a user reuses it. --autotune compiles flex_attention with
mode="max-autotune-no-cudagraphs", which times its template's configs and keeps the fastest.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
from probe_attention_tiles import SHAPES, against_sdpa  # noqa: E402 - scripts is on the path
from tune_sweep import load_solution, save_json  # noqa: E402

from tutor.bench.recipe import load_recipes  # noqa: E402


def flex_side(seq_len: int, autotune: bool):
    """flex_attention compiled, called as m3's attention(q, k, v, causal)."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    mode = "max-autotune-no-cudagraphs" if autotune else None
    compiled = torch.compile(flex_attention, dynamic=False, mode=mode)
    causal_mask = create_block_mask(
        lambda b, h, q_idx, kv_idx: q_idx >= kv_idx, None, None, seq_len, seq_len, device="cuda"
    )

    def call(q, k, v, causal):
        return compiled(q, k, v, block_mask=causal_mask if causal else None)

    return call


def timed(shape: dict, op, module, autotune: bool) -> list[dict]:
    flex = flex_side(shape["s"], autotune)
    name = "flex_attention" + (" max-autotune" if autotune else "")
    sides = {"SDPA": op.eager, "solution": module.attention, name: flex}
    return against_sdpa(shape, op, sides)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--autotune", action="store_true")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("probe_attention_flex.py times kernels on a GPU; torch sees none", file=sys.stderr)
        return 2
    op = load_recipes(ROOT / "drills" / "bench" / "m3.py")["attention"]
    module = load_solution("m3_attention")
    rows = [row for shape in SHAPES for row in timed(shape, op, module, args.autotune)]
    name = "probe-attention-flex" + ("-autotune" if args.autotune else "") + ".json"
    device = torch.cuda.get_device_name(0)
    save_json(args.out, name, {"device": device, "torch": torch.__version__, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
