"""What `tutor bench m3` needs besides the kernels: inputs, bytes moved, FLOPs, torch eager."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal


def attention_eager(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)


def _attention_inputs(s, dtype, device, gen):
    shape = (s["b"], s["h"], s["s"], s["d"])
    q, k, v = (normal(shape, dtype, device, gen) for _ in range(3))
    return q, k, v, bool(s["causal"])


def _attention_flops(s) -> float:
    # two matmuls (q k^T and p v) of 2 * s * s * d FLOPs per head; causal computes half
    flops = 4 * s["b"] * s["h"] * s["s"] * s["s"] * s["d"]
    return flops / 2 if s["causal"] else flops


RECIPES = [
    Recipe(
        function="attention",
        dims=("b", "h", "s", "d", "causal"),
        make=_attention_inputs,
        # q, k, v read once, out written once: the S x S scores never touch memory
        nbytes=lambda s, b: 4 * s["b"] * s["h"] * s["s"] * s["d"] * b,
        flops=_attention_flops,
        target=0.5,  # 50% of F.scaled_dot_product_attention; the rest is taught in "going faster"
        eager=attention_eager,
    ),
]
