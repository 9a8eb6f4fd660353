"""What `tutor bench f5` needs besides the kernels: inputs, bytes moved, torch eager."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal

IGNORE_INDEX = -100
IGNORED_SHARE = 0.1  # about one token in ten masked out (padding, prompt tokens)
TARGET_ITEMSIZE = 8  # int64 targets
LOSS_ITEMSIZE = 4  # the 0-dim float32 loss


def cross_entropy_eager(logits: torch.Tensor, target: torch.Tensor,
                        ignore_index: int = IGNORE_INDEX) -> tuple[torch.Tensor, torch.Tensor]:
    """F.cross_entropy forward and its backward through autograd, as a trainer runs them.

    The loss is taken on fp32 logits (F.cross_entropy on bf16 gives a bf16 loss); the gradient
    comes back through .float() in logits' dtype.
    """
    leaf = logits.detach().requires_grad_()
    loss = F.cross_entropy(leaf.float(), target, ignore_index=ignore_index)
    loss.backward()
    return loss.detach(), leaf.grad


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
    ),
]
