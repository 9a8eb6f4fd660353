"""What `tutor bench f1` needs besides the kernels: inputs, bytes moved, torch eager.

The yardstick is the sort-based renormalisation torch users write (and what the tests' reference
does): sort each row, find the threshold in the sorted row, keep what is >= it, divide.
"""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

TOP_P = 0.9
TOP_K = 50
LOGIT_STD = 2.0  # probs = softmax(normal logits): a few large, a long tail of small ones
P_ITEMSIZE = 4  # top_p's per-row p, float32


def search_steps(itemsize: int) -> int:
    """Halvings of the key range the solution makes: float32 keys have 30 bits that can change,
    a bf16 value's 14 (the bench's 2-byte dtype is bfloat16; float16 would take 17)."""
    return 30 if itemsize == 4 else 14


def renorm_bytes(s: dict[str, int], itemsize: int) -> int:
    """The rows read once for the whole row's mass, once per search step and once more to
    write, plus the output written: (steps + 2) reads and 1 write of [b, v]. The searches
    re-read the row from L2 when it fits there; the count is what the solution must move, so
    a kernel with more passes than that shows as extra traffic."""
    row_bytes = s["b"] * s["v"] * itemsize
    return (search_steps(itemsize) + 3) * row_bytes + s["b"] * P_ITEMSIZE


def _probs(s, dtype, device, gen) -> torch.Tensor:
    logits = normal((s["b"], s["v"]), torch.float32, device, gen, std=LOGIT_STD)
    return torch.softmax(logits, dim=-1).to(dtype)


def _renormalised(x: torch.Tensor, threshold: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    kept = torch.where(x >= threshold, x, torch.zeros_like(x))
    return (kept / kept.sum(dim=-1, keepdim=True)).to(dtype)


def top_p_renorm_eager(probs: torch.Tensor, p: float) -> torch.Tensor:
    """Sort, a running sum, the first sorted value at which it reaches p, a threshold."""
    x = probs.float()
    ordered = torch.sort(x, dim=-1, descending=True).values
    short = (torch.cumsum(ordered, dim=-1) < p).sum(dim=-1, keepdim=True)
    threshold = ordered.gather(-1, short.clamp(max=x.shape[-1] - 1))
    return _renormalised(x, threshold, probs.dtype)


def top_k_renorm_eager(probs: torch.Tensor, k: int) -> torch.Tensor:
    """Sort, the k-th sorted value as the threshold (ties with it kept, as the drill asks)."""
    x = probs.float()
    ordered = torch.sort(x, dim=-1, descending=True).values
    threshold = ordered[:, min(k, x.shape[-1]) - 1 :][:, :1]
    return _renormalised(x, threshold, probs.dtype)


RECIPES = [
    # No rows_key: 64 rows is a decode batch by count, but each row is 32k-152k wide, and the
    # search passes make these cases hundreds of MB: bandwidth-bound, not launch-bound.
    Recipe(
        function="top_p_renorm",
        dims=("b", "v"),
        make=lambda s, dtype, device, gen: (_probs(s, dtype, device, gen), TOP_P),
        nbytes=renorm_bytes,
        eager=top_p_renorm_eager,
        target=80,  # issue 58: 80% of copy bandwidth with the search passes counted
    ),
    Recipe(
        function="top_k_renorm",
        dims=("b", "v"),
        make=lambda s, dtype, device, gen: (_probs(s, dtype, device, gen), TOP_K),
        nbytes=lambda s, itemsize: renorm_bytes(s, itemsize) - s["b"] * P_ITEMSIZE,
        eager=top_k_renorm_eager,
        target=80,
    ),
]
