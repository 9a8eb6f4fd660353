"""What `tutor bench m3` needs besides the kernels: inputs, bytes moved, FLOPs, torch eager."""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from tutor.bench.recipe import Recipe, normal
from tutor.bench.rules import Case, Finding, common_numbers, residual
from tutor.lang.i18n import _

# With causal=True half of the scores are masked: a kernel that skips the key blocks above the
# diagonal takes about 0.55 of its non-causal time at S = 4096 (the reference: 0.56 on an
# H200); one that visits every block and masks them takes as long as without the mask.
CAUSAL_SKIPPED = 0.75  # the yardstick's causal / non-causal time below which it skips
CAUSAL_NOT_SKIPPED = 0.85  # the learner's ratio from which the blocks were not skipped
# The GPU's exponential is 2^x. tl.exp(x) compiles to it through the form that keeps denormal
# results (a range check and two multiplies around each one, in SASS); tl.exp2 to the
# flush-to-zero form, one instruction. On an H200 (b4 h32 s4096 d128, bf16) a kernel whose
# exponentials were all tl.exp took 1.31x the reference's time without the mask and 1.12x with
# it; one that multiplied by log2(e) inside each tl.exp2 took the reference's time.
NATURAL_EXP_SHARE = 0.5  # of the kernel's exponentials that keep denormals (are tl.exp)


def attention_eager(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)


def attention_flex(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
) -> torch.Tensor:
    """torch.compile's own attention: flex_attention, which Inductor writes in Triton from its
    tuned template. Compiling scaled_dot_product_attention would give SDPA's kernel back, the
    eager column. The causal mask is a block mask made once per length, as a user keeps it, so
    flex skips the blocks above the diagonal as the reference does."""
    mask = _causal_block_mask(q.shape[-2], q.device) if causal else None
    return _compiled_flex()(q, k, v, block_mask=mask, scale=sm_scale)


@functools.cache
def _compiled_flex():
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention, dynamic=False)


@functools.cache
def _causal_block_mask(seq_len: int, device: torch.device):
    from torch.nn.attention.flex_attention import create_block_mask

    def visible(batch, head, q_idx, kv_idx):
        return q_idx >= kv_idx

    return create_block_mask(visible, None, None, seq_len, seq_len, device=device)


def _attention_inputs(s, dtype, device, gen):
    shape = (s["b"], s["h"], s["s"], s["d"])
    q, k, v = (normal(shape, dtype, device, gen) for _ in range(3))
    return q, k, v, bool(s["causal"])


def _attention_flops(s) -> float:
    # two matmuls (q k^T and p v) of 2 * s * s * d FLOPs per head; causal computes half
    flops = 4 * s["b"] * s["h"] * s["s"] * s["s"] * s["d"]
    return flops / 2 if s["causal"] else flops


def causal_blocks_not_skipped(case: Case) -> Finding | None:
    """The causal case costs the learner's kernel about what the non-causal one does, while
    the yardstick saves close to half: the key blocks above the diagonal are still visited."""
    if not case.shape.get("causal") or case.baseline is None:
        return None
    plain = {**case.shape, "causal": 0}
    twin = next((c for c in case.others if c.function == case.function and c.shape == plain), None)
    if twin is None or twin.baseline is None:
        return None
    times = (case.mine.time, twin.mine.time, case.baseline.time, twin.baseline.time)
    if not all(times):
        return None
    mine, base = times[0] / times[1], times[2] / times[3]
    if mine < CAUSAL_NOT_SKIPPED or base > CAUSAL_SKIPPED:
        return None
    numbers = {
        "us": round(times[0], 1),
        "plain_us": round(times[1], 1),
        "causal_pct": round(100 * mine),
        "ref_causal_pct": round(100 * base),
        "seq_len": case.shape.get("s"),
    }
    return Finding(
        "no-causal-skip",
        _(
            "with causal=True your kernel takes {causal_pct}% of its time without the mask "
            "({us} against {plain_us} µs), where the reference takes {ref_causal_pct}%: it "
            "still loads and multiplies the key blocks above the diagonal, then masks every "
            "score they give."
        ).format(**numbers),
        numbers,
    )


@residual  # small tiles, spills or launches cost more than the exponentials: named first
def natural_exp(case: Case) -> Finding | None:
    """Most of the learner's exponentials are the denormal-keeping form tl.exp compiles to (in
    its compiled code), where the yardstick's are not."""
    main = case.mine.main
    base = case.baseline.main if case.baseline else None
    if not main or not base or not main.get("exp_ops"):
        return None
    share = (main.get("exp_denormal") or 0) / main["exp_ops"]
    base_share = (base.get("exp_denormal") or 0) / base["exp_ops"] if base.get("exp_ops") else 0.0
    if share < NATURAL_EXP_SHARE or base_share >= NATURAL_EXP_SHARE:
        return None
    numbers = {
        **common_numbers(case),
        "kernel": main.get("kernel"),
        "exp_ops": main["exp_ops"],
        "exp_denormal": main.get("exp_denormal"),
    }
    return Finding(
        "exp2",
        _(
            "{exp_denormal} of the {exp_ops} exponentials in {kernel}'s compiled code are "
            "tl.exp: the GPU computes 2^x, and e^x goes through the form of it that keeps "
            "denormal results, a range check and two multiplies more per score on the busiest "
            "line of the kernel ({us} µs; the reference, all exp2, {ref_us})."
        ).format(**numbers),
        numbers,
    )


RECIPES = [
    Recipe(
        function="attention",
        dims=("b", "h", "s", "d", "causal"),
        make=_attention_inputs,
        # q, k, v read once, out written once: the S x S scores never touch memory
        nbytes=lambda s, b: 4 * s["b"] * s["h"] * s["s"] * s["d"] * b,
        flops=_attention_flops,
        target=0.9,  # 90% of F.scaled_dot_product_attention (issue 27); "going faster" says how
        eager=attention_eager,
        # H100, 2026-12-06: flex_attention took 1.08-1.44x the reference's time at every bench
        # shape, with its defaults or max-autotune (the lab's probe_attention_flex)
        compiled=attention_flex,
        compiled_as="flex_attention",
        levers=(causal_blocks_not_skipped, natural_exp),
    ),
]
