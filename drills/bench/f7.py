"""What `tutor bench f7` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

LSE_ITEMSIZE = 4  # the LSEs are float32 whatever v's dtype


def merge_attn_states_eager(
    v_a: torch.Tensor, lse_a: torch.Tensor, v_b: torch.Tensor, lse_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    m = torch.maximum(lse_a, lse_b)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    w_a, w_b = torch.exp(lse_a - m), torch.exp(lse_b - m)
    total = w_a + w_b
    inv = torch.where(total > 0, 1.0 / total, torch.zeros_like(total))
    v = v_a.float() * (w_a * inv)[..., None] + v_b.float() * (w_b * inv)[..., None]
    return v.to(v_a.dtype), m + torch.log(total)


def _merge_inputs(s, dtype, device, gen):
    shape = (s["t"], s["h"], s["d"])
    v_a, v_b = normal(shape, dtype, device, gen), normal(shape, dtype, device, gen)
    lse_a = normal(shape[:2], torch.float32, device, gen, mean=5.0, std=2.0)
    lse_b = normal(shape[:2], torch.float32, device, gen, mean=5.0, std=2.0)
    return v_a, lse_a, v_b, lse_b


RECIPES = [
    Recipe(
        function="merge_attn_states",
        dims=("t", "h", "d"),
        make=_merge_inputs,
        # v_a, v_b read and v written; lse_a, lse_b read and lse written (fp32)
        nbytes=lambda s, b: 3 * s["t"] * s["h"] * s["d"] * b + 3 * s["t"] * s["h"] * LSE_ITEMSIZE,
        eager=merge_attn_states_eager,
        rows_key="t",
    ),
]
