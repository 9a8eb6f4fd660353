"""What `tutor bench f5` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch

from tutor.bench.recipe import Recipe, normal

IGNORE_INDEX = -100
IGNORED_SHARE = 0.1  # about one token in ten masked out (padding, prompt tokens)
TARGET_ITEMSIZE = 8  # int64 targets
LOSS_ITEMSIZE = 4  # the 0-dim float32 loss
# The solution's MAX_BLOCK_V: a longer row cannot be held in one block's registers, and any
# one-program-per-row kernel reads it twice (once for its max and sum, once for the gradient).
ONE_BLOCK_MAX = 32768


def cross_entropy_eager(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int = IGNORE_INDEX
) -> tuple[torch.Tensor, torch.Tensor]:
    """F.cross_entropy's forward and backward in closed form, in fp32, as torch ops.

    The same numbers as F.cross_entropy(logits.float(), target, ignore_index=...) followed by
    .backward() (checked on the CPU), but one function of tensors that torch.compile can fuse,
    where an autograd call inside it would break the graph. 0, not NaN, when no row counts.
    """
    x = logits.float()
    counted = target != ignore_index
    n_valid = counted.sum().clamp(min=1)
    safe = torch.where(counted, target, 0)[:, None]
    lse = torch.logsumexp(x, dim=-1, keepdim=True)
    loss = torch.where(counted[:, None], lse - x.gather(1, safe), 0.0).sum() / n_valid
    grad = torch.exp(x - lse)
    grad = grad.scatter_add(1, safe, torch.full_like(safe, -1, dtype=grad.dtype))
    grad = grad * (counted[:, None] / n_valid)
    return loss, grad.to(logits.dtype)


def _inputs(s, dtype, device, gen):
    t, v = s["t"], s["v"]
    logits = normal((t, v), dtype, device, gen, std=2.0)
    target = torch.randint(0, v, (t,), generator=gen, device=device)
    ignored = torch.rand(t, generator=gen, device=device) < IGNORED_SHARE
    target = torch.where(ignored, torch.full_like(target, IGNORE_INDEX), target)
    return logits, target, IGNORE_INDEX


RECIPES = [
    Recipe(
        function="cross_entropy",
        dims=("t", "v"),
        make=_inputs,
        # logits read once (the second pass's re-read is not counted: a kernel that keeps the
        # row in L2 or registers need not pay it), dlogits written, targets read, loss written
        nbytes=lambda s, b: 2 * s["t"] * s["v"] * b + s["t"] * TARGET_ITEMSIZE + LOSS_ITEMSIZE,
        eager=cross_entropy_eager,
        rows_key="t",
        rereads=lambda s: s["v"] > ONE_BLOCK_MAX,
    ),
]
