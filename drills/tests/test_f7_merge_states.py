"""Tests for drill F7: merge_attn_states, combining two partial attention results by their LSE.

Every check compares with a torch reference computed here (in float64, then rounded the way the
backend rounds) and, on a mismatch, with what each known mistake would produce: weights taken
in base 2, v not divided by the sum of the weights, the output LSE left unmerged. Inputs
expose the rest: LSEs around +-100 to +-1000 (where exp of a raw LSE overflows or underflows in
fp32), parts with no keys (lse = -inf) on one side or both, LSE tensors stored head-major as
flash attention returns them, NaN around every input.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Learner,
    Suspect,
    Tolerance,
    expect_close,
    expect_unchanged,
    guarded,
    round_to,
    row_sliced,
)
from tutor.harness import diagnoses as dx
from tutor.harness.allocations import never_written

DRILL = "f7"
# A lane past head_dim is never stored and no LSE lies past the tokens x heads the grid covers:
# a load there that reads 0 leaves the output right (tutor.harness.drill_plugin).
ZEROS_PAST_END_HARMLESS = True

DTYPES = [torch.float32, torch.bfloat16]
DTYPE_IDS = ["fp32", "bf16"]
LOG2E = math.log2(math.e)
NEG_INF = float("-inf")
# Beyond this |lse|, exp(lse) is inf (e^88.7 > 3.4e38) or a denormal with a few bits (e^-87).
FP32_EXP_RANGE = 80.0

# fp32 v: two weights in [0, 1] times values ~N(0, 1); the GPU's exp and division are a few
# ulp from torch's, so the result moves by ~1e-7.
V_FP32 = Tolerance(atol=1e-5, rtol=1e-5)
# bf16 v: one ulp (2**-7 relative at most) when the fp32 value sits next to a rounding boundary.
ONE_BF16_ULP = Tolerance(atol=1e-5, rtol=2**-7)
# lse: m + log(w_a + w_b) with m up to 1000 here; one fp32 ulp of 1000 is 6e-5.
LSE_FP32 = Tolerance(atol=1e-5, rtol=1e-5)


def _v_tol(dtype: torch.dtype) -> Tolerance:
    return V_FP32 if dtype == torch.float32 else ONE_BF16_ULP


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake would produce
# ----------------------------------------------------------------------------------------------

Inputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]  # v_a, lse_a, v_b, lse_b


def merge_fp64(v_a, lse_a, v_b, lse_b, *, weight=torch.exp, log=torch.log, normalise=True):
    """(v, lse) in float64; `weight` turns lse - m into a weight, `log` takes the log of the sum;
    `normalise=False`: v is the weighted sum, not divided by the sum of the weights.

    Positions where both parts are empty come out NaN; the tests check those separately.
    """
    lse_a, lse_b = lse_a.double(), lse_b.double()
    m = torch.maximum(lse_a, lse_b)
    w_a, w_b = weight(lse_a - m), weight(lse_b - m)
    total = w_a + w_b
    v = w_a[..., None] * v_a.double() + w_b[..., None] * v_b.double()
    if normalise:
        v = v / total[..., None]
    return v, m + log(total)


def expected(inputs: Inputs, backend: Backend) -> tuple[torch.Tensor, torch.Tensor]:
    v, lse = merge_fp64(*inputs)
    return round_to(v.float(), inputs[0].dtype, backend), lse.float()


def base_2_weight(d: torch.Tensor) -> torch.Tensor:
    return torch.exp2(d)


def log2e_then_exp(d: torch.Tensor) -> torch.Tensor:
    return torch.exp(d * LOG2E)


WEIGHTS = [
    (torch.exp, "exp(lse - m)"),
    (base_2_weight, "exp2(lse - m) without the log2(e) factor"),
    (log2e_then_exp, "exp((lse - m) * log2(e)): the log2(e) factor with exp instead of exp2"),
]
LOGS = [(torch.log, "m + log(w_a + w_b)"), (torch.log2, "m + log2(w_a + w_b), not log")]


Pick = Callable[[torch.Tensor], torch.Tensor]


def _picker(sel: torch.Tensor) -> Pick:
    """What of each [T, H, ...] tensor is compared: the heads in `sel`, or, where that is every
    head, the whole tensor, whose shape lets the harness see an end left unwritten (the last
    heads of every token), which the rows picked out by `sel` would hide."""
    if bool(sel.all()):
        return lambda t: t
    return lambda t: t[sel]


def v_suspects(inputs: Inputs, backend: Backend, pick: Pick) -> list[Suspect]:
    def v_of(**mistake) -> torch.Tensor:
        return pick(round_to(merge_fp64(*inputs, **mistake)[0].float(), inputs[0].dtype, backend))

    return [
        Suspect("lse-base", v_of(weight=w), f"the merge with weights {story}")
        for w, story in WEIGHTS[1:]
    ] + [
        Suspect(
            "v-not-normalised",
            v_of(normalise=False),
            "w_a * v_a + w_b * v_b without the division by w_a + w_b",
        )
    ]


def lse_suspects(inputs: Inputs, pick: Pick) -> list[Suspect]:
    _, lse_a, _, lse_b = inputs
    found = []
    for w, w_story in WEIGHTS:
        for log, log_story in LOGS:
            if w is torch.exp and log is torch.log:
                continue  # the reference
            lse = merge_fp64(*inputs, weight=w, log=log)[1].float()
            found.append(Suspect("lse-base", pick(lse), f"{log_story} with weights {w_story}"))
    right = merge_fp64(*inputs)[1]
    found.append(
        Suspect(
            "lse-base",
            pick((right * LOG2E).float()),
            "the merged LSE in base 2 (times log2(e)): it must be a natural log",
        )
    )
    m = torch.maximum(lse_a, lse_b)
    found += [
        Suspect("lse-not-merged", pick(m), "max(lse_a, lse_b): the log(w_a + w_b) term is missing"),
        Suspect("lse-not-merged", pick(lse_a), "lse_a: the output LSE must be the merged one"),
        Suspect("lse-not-merged", pick(lse_b), "lse_b: the output LSE must be the merged one"),
        Suspect(
            "lse-not-merged",
            pick((m + math.log(2)).float()),
            "max + log(2): the two parts weighted equally",
        ),
        Suspect(
            "lse-not-merged",
            pick((right - m).float()),
            "log(w_a + w_b) alone: the max subtracted for the weights is never added back",
        ),
    ]
    return found


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def make_v(
    shape: tuple[int, int, int], dtype: torch.dtype, device: str, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two different value tensors in NaN guards (finite even where a part is empty)."""
    v_a = torch.randn(shape, generator=gen).to(device, dtype)
    v_b = (1 + torch.randn(shape, generator=gen)).to(device, dtype)
    return v_a, v_b


def moderate_lse(shape: tuple[int, int], gen: torch.Generator) -> torch.Tensor:
    """LSEs as short chunks of keys give them: a few units, the two parts 0-6 apart."""
    return 2 + 2 * torch.randn(shape, generator=gen)


def call(impl: Learner, inputs: Inputs) -> object:
    """The learner's function on NaN-guarded copies of the inputs."""
    return impl.merge_attn_states(*(guarded(t)[0] for t in inputs))


# ----------------------------------------------------------------------------------------------
# The check every test makes
# ----------------------------------------------------------------------------------------------


def _split(out: object) -> tuple[object, object]:
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise DrillFailure(
            dx.WRONG_SHAPE, f"merge_attn_states should return (v, lse), got {type(out).__name__}"
        )
    return out[0], out[1]


def _close_per_head(v, lse, want_v, want_lse, dtype) -> torch.Tensor:
    """[T, H] bool: v (all D values) and lse right at that token and head."""
    tol = _v_tol(dtype)
    v_ok = torch.isclose(v.float(), want_v.float(), atol=tol.atol, rtol=tol.rtol).all(-1)
    lse_ok = torch.isclose(lse, want_lse, atol=LSE_FP32.atol, rtol=LSE_FP32.rtol)
    return v_ok & lse_ok


def _well_formed(v: object, lse: object, want_v: torch.Tensor, want_lse: torch.Tensor) -> bool:
    return (
        isinstance(v, torch.Tensor)
        and isinstance(lse, torch.Tensor)
        and v.shape == want_v.shape
        and v.dtype == want_v.dtype
        and lse.shape == want_lse.shape
        and lse.dtype == want_lse.dtype
    )


def _is_right_for(inputs: Inputs, backend: Backend) -> Callable[[object], bool]:
    """Whether an output is well formed and right at every head, for these inputs."""
    want_v, want_lse = expected(inputs, backend)

    def right(out: object) -> bool:
        v, lse = _split(out)
        return _well_formed(v, lse, want_v, want_lse) and bool(
            _close_per_head(v, lse, want_v, want_lse, inputs[0].dtype).all()
        )

    return right


def check_merge(impl: Learner, backend: Backend, out: object, inputs: Inputs) -> None:
    v, lse = _split(out)
    v_a, lse_a, v_b, lse_b = inputs
    want_v, want_lse = expected(inputs, backend)
    both_empty = torch.isneginf(lse_a) & torch.isneginf(lse_b)
    sel = ~both_empty
    finite_max = torch.maximum(lse_a.nan_to_num(neginf=0).abs(), lse_b.nan_to_num(neginf=0).abs())
    large = (finite_max > FP32_EXP_RANGE) & sel

    # Right where exp(lse) fits in fp32, wrong where it does not: exp of the raw LSEs.
    if large.any() and _well_formed(v, lse, want_v, want_lse):
        right = _close_per_head(v, lse, want_v, want_lse, v_a.dtype)
        moderate = sel & ~large
        # a head never written is wrong whatever its LSEs: no evidence about exp's range
        unwritten = never_written(v).reshape(*lse.shape, -1).all(-1) | never_written(lse)
        wrong_large = large & ~right
        if (
            moderate.any()
            and right[moderate].all()
            and wrong_large.any()
            and not unwritten[wrong_large].any()
        ):
            worst = float(finite_max[wrong_large].max())
            raise DrillFailure(
                "no-max-subtraction",
                f"v or lse is wrong at {int((large & ~right).sum())} of {int(large.sum())} "
                f"heads whose LSEs reach |lse| = {worst:g}, though every head whose LSEs stay "
                f"below {FP32_EXP_RANGE:g} came out right",
                "exp(89) is already inf in fp32 and exp(-104) is 0: the weights must be "
                "exp(lse - max), never exp(lse).",
            )

    pick = _picker(sel)
    expect_close(
        pick(v) if isinstance(v, torch.Tensor) and v.shape == want_v.shape else v,
        pick(want_v),
        what="v",
        tol=_v_tol(v_a.dtype),
        suspects=lambda: v_suspects(inputs, backend, pick),
        fp32_rerun=lambda: pick(_split(call(impl, (v_a.float(), lse_a, v_b.float(), lse_b)))[0]),
        fp32_expected=pick(merge_fp64(*inputs)[0].float()),
        reads_guarded=True,
    )
    expect_close(
        pick(lse) if isinstance(lse, torch.Tensor) and lse.shape == want_lse.shape else lse,
        pick(want_lse),
        what="lse",
        tol=LSE_FP32,
        suspects=lambda: lse_suspects(inputs, pick),
        reads_guarded=True,
    )
    if both_empty.any():
        v_empty, lse_empty = v[both_empty].float(), lse[both_empty]
        if bool(never_written(v[both_empty]).any()) or bool(never_written(lse_empty).any()):
            # Never written there at all: the heads were never reached, not merged wrongly.
            expect_close(
                v[both_empty],
                torch.zeros_like(v[both_empty]),
                what="v at the heads where both parts are empty",
                tol=V_FP32,
            )
        if not (
            torch.equal(v_empty, torch.zeros_like(v_empty))
            and bool(torch.isneginf(lse_empty).all())
        ):
            found = []
            if v_empty.isnan().any():
                found.append(f"v has {int(v_empty.isnan().sum())} NaN")
            elif (v_empty != 0).any():
                found.append("v is not 0")
            if lse_empty.isnan().any():
                found.append(f"lse has {int(lse_empty.isnan().sum())} NaN")
            elif not torch.isneginf(lse_empty).all():
                found.append("lse is not -inf")
            raise DrillFailure(
                "both-neg-inf",
                f"at the {int(both_empty.sum())} heads where both parts are empty (lse_a = "
                f"lse_b = -inf): {' and '.join(found)}; expected v = 0 and lse = -inf",
                "With m = max(-inf, -inf) = -inf, lse - m is -inf - (-inf) = NaN.",
            )


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------

SHAPES = {
    "t5-h3-d40": (5, 3, 40),  # D not a power of two: padded lanes in every head
    "t4-h8-d64": (4, 8, 64),
    "t3-h5-d128": (3, 5, 128),  # H not a power of two: padded heads
}


@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_merge_attn_states(impl, backend, device, dtype, shape):
    """Both parts non-empty, LSEs a few units apart, so both weights matter and base 2 shows."""
    gen = torch.Generator().manual_seed(sum(shape))
    v_a, v_b = make_v(shape, dtype, device, gen)
    lse_a = moderate_lse(shape[:2], gen).to(device)
    lse_b = moderate_lse(shape[:2], gen).to(device)
    inputs = (v_a, lse_a, v_b, lse_b)
    guarded_inputs = [guarded(t) for t in inputs]
    before = [buffer.clone() for _, buffer in guarded_inputs]

    out = impl.merge_attn_states(*(t for t, _ in guarded_inputs))

    for (_, buffer), saved, name in zip(
        guarded_inputs, before, ("v_a", "lse_a", "v_b", "lse_b"), strict=True
    ):
        expect_unchanged(buffer, saved, what=f"the input {name}")
    check_merge(impl, backend, out, inputs)


def test_merge_attn_states_large_lse(impl, backend, device):
    """Heads 0-2 have LSEs of a few units; heads 3-5 around +100, -120 and +1000.

    Merging is shift-invariant, so the large heads are as easy as the small ones once the max
    is subtracted; exp of the raw LSEs is inf (or 0) there in fp32.
    """
    shape = (4, 6, 40)
    gen = torch.Generator().manual_seed(21)
    v_a, v_b = make_v(shape, torch.float32, device, gen)
    offsets = torch.tensor([0.0, 2.0, -3.0, 100.0, -120.0, 1000.0])
    lse_a = (offsets + 2 * torch.randn(shape[:2], generator=gen)).to(device)
    lse_b = (offsets + 2 * torch.randn(shape[:2], generator=gen)).to(device)
    inputs = (v_a, lse_a, v_b, lse_b)

    check_merge(impl, backend, call(impl, inputs), inputs)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_merge_attn_states_empty_parts(impl, backend, device, dtype):
    """Head 0: both parts have keys; head 1: part a is empty; head 2: part b; head 3: both.

    Tokens 0-2 have LSEs of a few units, tokens 3-5 around +-150. An empty part must drop out
    (the other part alone), and two empty parts give v = 0 and lse = -inf, never NaN.
    """
    shape = (6, 4, 40)
    gen = torch.Generator().manual_seed(31)
    v_a, v_b = make_v(shape, dtype, device, gen)
    scale = torch.tensor([0.0, 0.0, 0.0, 150.0, -150.0, 150.0])[:, None]
    lse_a = scale + moderate_lse(shape[:2], gen)
    lse_b = scale + moderate_lse(shape[:2], gen)
    lse_a[:, 1] = NEG_INF
    lse_b[:, 2] = NEG_INF
    lse_a[:, 3] = NEG_INF
    lse_b[:, 3] = NEG_INF
    inputs = (v_a, lse_a.to(device), v_b, lse_b.to(device))

    check_merge(impl, backend, call(impl, inputs), inputs)


def test_merge_attn_states_head_major_lse(impl, backend, device):
    """lse_a and lse_b stored [H, T] (flash attention's layout) and passed as [T, H] views.

    The same values are first given contiguous: right there and wrong here means the kernel
    assumes lse[t, h] sits at t * H + h instead of using the tensors' strides.
    """
    shape = (5, 3, 40)
    gen = torch.Generator().manual_seed(41)
    v_a, v_b = make_v(shape, torch.bfloat16, device, gen)
    lse_a = moderate_lse(shape[:2], gen).to(device)
    lse_b = moderate_lse(shape[:2], gen).to(device)
    inputs = (v_a, lse_a, v_b, lse_b)
    right = _is_right_for(inputs, backend)

    works_contiguous = right(call(impl, inputs))
    head_major = [guarded(t.t().contiguous())[0].t() for t in (lse_a, lse_b)]

    out = impl.merge_attn_states(guarded(v_a)[0], head_major[0], guarded(v_b)[0], head_major[1])

    if works_contiguous and not right(out):
        raise DrillFailure(
            dx.ROW_STRIDE,
            f"v or lse is wrong when lse_a and lse_b have strides (1, {shape[0]}) (stored "
            f"[H, T]), though the same values with strides ({shape[1]}, 1) came out right",
            "Pass lse_a.stride(0), lse_a.stride(1) (and lse_b's) to the kernel and index "
            "lse by them.",
            facts={"way": "strides", "tensor": "lse_a", "strides": f"(1, {shape[0]})"},
        )
    check_merge(impl, backend, out, inputs)


def _misread(impl, inputs, laid_out, names, right) -> dict:
    """For the hints: the one input whose own layout alone (the others contiguous) makes the
    output wrong, and its strides; none when it takes more than one."""
    wrong = []
    for n, name in enumerate(names):
        if laid_out[n].is_contiguous():
            continue
        alone = [guarded(t)[0] for t in inputs]
        alone[n] = laid_out[n]
        if not right(impl.merge_attn_states(*alone)):
            wrong.append((name, laid_out[n]))
    if len(wrong) != 1:
        return {}
    name, tensor = wrong[0]
    return {"way": "strides", "tensor": name, "strides": str(tuple(tensor.stride()))}


def test_merge_attn_states_mixed_layouts(impl, backend, device):
    """Each input in its own layout: v_a a slice of wider heads ([T, H, D + 64][..., :D]), v_b
    contiguous, lse_a [T, H] and lse_b stored [H, T]. A kernel that takes one tensor's strides
    for another, or v's strides from its shape, is right on contiguous inputs and wrong here.
    """
    shape = (5, 3, 40)
    gen = torch.Generator().manual_seed(51)
    v_a, v_b = make_v(shape, torch.float32, device, gen)
    lse_a = moderate_lse(shape[:2], gen).to(device)
    lse_b = moderate_lse(shape[:2], gen).to(device)
    inputs = (v_a, lse_a, v_b, lse_b)
    right = _is_right_for(inputs, backend)

    works_contiguous = right(call(impl, inputs))
    mixed = (
        row_sliced(v_a)[0],
        guarded(lse_a)[0],
        guarded(v_b)[0],
        guarded(lse_b.t().contiguous())[0].t(),
    )

    out = impl.merge_attn_states(*mixed)

    if works_contiguous and not right(out):
        names = ("v_a", "lse_a", "v_b", "lse_b")
        strides = ", ".join(f"{n} {tuple(t.stride())}" for n, t in zip(names, mixed, strict=True))
        raise DrillFailure(
            dx.ROW_STRIDE,
            f"v or lse is wrong when the inputs have strides {strides}, though the same values "
            "in contiguous tensors came out right",
            "Each tensor has its own strides: pass v_a's, v_b's, lse_a's and lse_b's to the "
            "kernel and index each tensor by its own.",
            facts=_misread(impl, inputs, mixed, names, right),
        )
    check_merge(impl, backend, out, inputs)
