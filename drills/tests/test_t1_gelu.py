"""Tests for drill t1: `gelu_tanh(x)`, the tanh-approximate GELU written through the sigmoid.

Inputs are spread over [-6, 6], where the exact (erf) GELU and the tanh form differ by up to
4.7e-4 and every wrong tanh identity is far off; sizes leave the last block partly filled. Two
more tests: |x| from 20 to 100, where tanh written with exp overflows (inf / inf = NaN), and
[-3, 3] under a tight tolerance, where a constant rounded to a few digits shows. The suspects
below are what each known mistake would output, so a failure names the mistake.
Tensors the learner allocates sit between runs of sentinel values: an unmasked store lands there
(and is named `missing-mask`) instead of in memory the process does not own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from tutor.harness import Backend, Suspect, Tolerance, expect_close, guarded, round_to
from tutor.harness.inputs import same_layout

DRILL = "t1"

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
CUBIC = 0.044715

# fp32: the GPU's sigmoid goes through an approximate exp2 (a few ulp, ~1e-6 relative); the
# erf form, the closest wrong answer, is 47x this tolerance away on [-6, 6].
FP32 = Tolerance(atol=1e-5, rtol=1e-5)
# bf16: the reference is rounded as the backend rounds, but a kernel's fp32 value may sit on the
# other side of a rounding boundary: one bf16 ulp is at most 2**-7 of the value.
BF16 = Tolerance(atol=1e-5, rtol=2**-7)
# fp32 on [-3, 3], to see the constants' digits: the GPU's sigmoid (ex2.approx and an
# approximate division) is good to about 4e-7 relative, so y = x * sigmoid(2z) is off by at most
# ~1.2e-6 there, under this tolerance (8e-6 allowed at |x| = 3). sqrt(2/pi) rounded to 0.7978 is
# 12 tolerances away, 0.044715 rounded to 0.0447 is 4.
CONSTANTS = Tolerance(atol=2e-6, rtol=2e-6)


def _tanh_gelu(
    x: torch.Tensor,
    *,
    scale: float = SQRT_2_OVER_PI,
    cubic: Callable[[torch.Tensor], torch.Tensor] = lambda x: CUBIC * x**3,
    tanh: Callable[[torch.Tensor], torch.Tensor] = torch.tanh,
    half: float = 0.5,
) -> torch.Tensor:
    """half * x * (1 + tanh(scale * (x + cubic(x)))): the right formula, or one mistake in it."""
    return half * x * (1 + tanh(scale * (x + cubic(x))))


def gelu_tanh_reference(x: torch.Tensor) -> torch.Tensor:
    """The tanh-form GELU in float64, returned as float32."""
    return _tanh_gelu(x.double()).float()


_sigmoid = torch.sigmoid

# (diagnosis, what the mistake computes from float64 x, completes "your output matches ...").
_MISTAKES: list[tuple[str, Callable[[torch.Tensor], torch.Tensor], str]] = [
    (
        "gelu-approximation",
        lambda x: 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0))),
        "the exact GELU, 0.5·x·(1 + erf(x/√2)), not its tanh form",
    ),
    (
        "gelu-approximation",
        lambda x: _tanh_gelu(x, cubic=lambda x: 0 * x),
        "the tanh form without the 0.044715·x³ term",
    ),
    (
        "gelu-approximation",
        lambda x: _tanh_gelu(x, cubic=lambda x: CUBIC * x**2),
        "the tanh form with 0.044715·x² where x³ belongs",
    ),
    (
        "gelu-approximation",
        lambda x: _tanh_gelu(x, scale=2.0 / math.pi),
        "the tanh form with 2/π where √(2/π) belongs",
    ),
    (
        "gelu-approximation",
        lambda x: _tanh_gelu(x, scale=math.sqrt(2.0) / math.pi),
        "the tanh form with √2/π where √(2/π) belongs",
    ),
    (
        "gelu-approximation",
        lambda x: _tanh_gelu(x, scale=math.sqrt(math.pi / 2.0)),
        "the tanh form with √(π/2) where √(2/π) belongs",
    ),
    (
        "gelu-approximation",
        lambda x: _tanh_gelu(x, scale=1.0),
        "the tanh form without the √(2/π) factor",
    ),
    (
        "gelu-approximation",
        lambda x: _tanh_gelu(x, half=1.0),
        "the tanh form without the factor 0.5 in front",
    ),
    (
        "gelu-approximation",
        lambda x: x * _sigmoid(1.702 * x),
        "the sigmoid approximation x·σ(1.702·x), not the tanh form",
    ),
    *[
        (
            "gelu-approximation",
            lambda x, s=scale, c=cubic: _tanh_gelu(x, scale=s, cubic=lambda x: c * x**3),
            f"the tanh form with the constant rounded to a few digits ({text})",
        )
        for scale, cubic, text in [
            (0.7978, CUBIC, "0.7978 for sqrt(2/pi) = 0.7978845608"),
            (0.7979, CUBIC, "0.7979 for sqrt(2/pi) = 0.7978845608"),
            (0.798, CUBIC, "0.798 for sqrt(2/pi) = 0.7978845608"),
            (0.8, CUBIC, "0.8 for sqrt(2/pi) = 0.7978845608"),
            (SQRT_2_OVER_PI, 0.0447, "0.0447 for 0.044715"),
            (SQRT_2_OVER_PI, 0.045, "0.045 for 0.044715"),
            (0.7978, 0.0447, "0.7978 for sqrt(2/pi) and 0.0447 for 0.044715"),
            (0.7979, 0.0447, "0.7979 for sqrt(2/pi) and 0.0447 for 0.044715"),
        ]
    ],
    (
        "tanh-identity",
        lambda x: _tanh_gelu(x, tanh=lambda z: 2 * _sigmoid(z) - 1),
        "the GELU with tanh(z) taken as 2·σ(z) − 1 (the sigmoid needs 2z)",
    ),
    (
        "tanh-identity",
        lambda x: _tanh_gelu(x, tanh=lambda z: _sigmoid(2 * z) - 1),
        "the GELU with tanh(z) taken as σ(2z) − 1 (the sigmoid needs the factor 2 in front)",
    ),
    (
        "tanh-identity",
        lambda x: _tanh_gelu(x, tanh=lambda z: 2 * _sigmoid(2 * z) + 1),
        "the GELU with tanh(z) taken as 2·σ(2z) + 1 (it is minus 1)",
    ),
    (
        "tanh-identity",
        lambda x: _tanh_gelu(x, tanh=lambda z: 1 - 2 * _sigmoid(2 * z)),
        "the GELU with tanh(z) taken as 1 − 2·σ(2z), which is −tanh(z)",
    ),
    (
        "tanh-identity",
        lambda x: _tanh_gelu(x, tanh=lambda z: 2 * _sigmoid(2 * z)),
        "the GELU with tanh(z) taken as 2·σ(2z) without the − 1",
    ),
    (
        "tanh-identity",
        lambda x: _tanh_gelu(x, tanh=lambda z: _sigmoid(2 * z)),
        "the GELU with tanh(z) taken as σ(2z)",
    ),
]


def _overflowing_tanh(x: torch.Tensor, tanh: Callable[[torch.Tensor], torch.Tensor]):
    """The GELU in float32 with tanh(z) written with exp, as a kernel computes it: exp(2z)
    is inf once 2z > 88.7, and inf / inf is NaN."""
    xf = x.float()
    return 0.5 * xf * (1 + tanh(SQRT_2_OVER_PI * (xf + CUBIC * xf * xf * xf)))


# (what a kernel computing tanh with exp gives in float32, the story)
_OVERFLOWS: list[tuple[Callable[[torch.Tensor], torch.Tensor], str]] = [
    (
        lambda z: (torch.exp(2 * z) - 1) / (torch.exp(2 * z) + 1),
        "tanh(z) as (e^2z - 1) / (e^2z + 1): inf / inf = NaN once e^2z overflows (z > 44)",
    ),
    (
        lambda z: (torch.exp(z) - torch.exp(-z)) / (torch.exp(z) + torch.exp(-z)),
        "tanh(z) as (e^z - e^-z) / (e^z + e^-z): inf / inf = NaN once |z| > 88",
    ),
]


# Where float32's exp overflows to inf: e^88.73 > 3.4e38.
EXP_OVERFLOWS_PAST = math.log(torch.finfo(torch.float32).max)


def _nan_where_exp_overflows(x: torch.Tensor, side: float) -> torch.Tensor:
    """The reference with NaN where exp(side * 2z) is inf in float32: what any tanh written with
    that exponential gives there (inf / inf, inf - inf, 0 * inf), whatever the formula."""
    xf = x.float()
    z = SQRT_2_OVER_PI * (xf + CUBIC * xf * xf * xf)
    out = gelu_tanh_reference(x).float()
    return torch.where(side * 2 * z > EXP_OVERFLOWS_PAST, torch.nan, out)


def suspects(x: torch.Tensor, backend: Backend) -> list[Suspect]:
    """Every known mistake's output on x, rounded to x's dtype as the backend rounds."""
    x64 = x.double()
    found = [
        Suspect(diagnosis, round_to(mistake(x64), x.dtype, backend), story)
        for diagnosis, mistake, story in _MISTAKES
    ]
    found += [
        Suspect("tanh-overflow", round_to(_overflowing_tanh(x, tanh), x.dtype, backend), story)
        for tanh, story in _OVERFLOWS
    ]
    # By where the NaN are, however tanh was written with exp: past z = 44 it overflows on the
    # positive side (e^2z), past z = -44 on the negative side (e^-2z, as in (1 - e^-2z) /
    # (1 + e^-2z)).
    found += [
        Suspect(
            "tanh-overflow",
            round_to(_nan_where_exp_overflows(x, side), x.dtype, backend),
            story,
            way=way,
        )
        for side, way, story in (
            (
                1.0,
                "",
                "NaN exactly where z > 44: tanh written with e^2z, which is inf there in "
                "float32, and inf / inf is NaN",
            ),
            (
                -1.0,
                "negative-side",
                "NaN exactly where z < -44: tanh written with e^-2z, which is inf there in "
                "float32, and inf / inf is NaN",
            ),
        )
    ]
    return found


def uniform(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    """Values spread evenly over [-6, 6]: the range where every mistake above shows."""
    generator = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=generator) * 12 - 6).to(dtype).to(device)


def check_gelu(
    impl, backend: Backend, x: torch.Tensor, tol: Tolerance, *, reads_guarded: bool = False
) -> None:
    y = impl.gelu_tanh(x)
    # The fp32 re-run keeps x's strides (and NaN guards): a layout mistake fails it as well.
    what = f"output for a {str(x.dtype).removeprefix('torch.')} x of shape {tuple(x.shape)}"
    expect_close(
        y,
        round_to(gelu_tanh_reference(x), x.dtype, backend),
        what=what,
        tol=tol,
        suspects=lambda: suspects(x, backend),
        fp32_rerun=lambda: impl.gelu_tanh(same_layout(x, torch.float32)),
        fp32_expected=gelu_tanh_reference(x.float()),
        reads_guarded=reads_guarded,
    )


def test_fp32_one_partly_filled_block(impl, backend):
    # 1000 elements: one block of 1024 (or a tail after blocks of 128..512) with NaN just past it.
    x, _ = guarded(uniform((1000,), torch.float32, backend.device, seed=1))
    check_gelu(impl, backend, x, FP32, reads_guarded=True)


def test_fp32_several_blocks(impl, backend):
    # 3 * 4096 + 123: at least four programs for any BLOCK up to 4096, and a ragged last one.
    x = uniform((3 * 4096 + 123,), torch.float32, backend.device, seed=2)
    check_gelu(impl, backend, x, FP32)


def test_bf16_3d(impl, backend):
    # 3 x 5 x 41 = 615 elements: the kernel must see a flat tensor and give back x's shape.
    x, _ = guarded(uniform((3, 5, 41), torch.bfloat16, backend.device, seed=3))
    check_gelu(impl, backend, x, BF16, reads_guarded=True)


def test_bf16_2d(impl, backend):
    x, _ = guarded(uniform((5, 123), torch.bfloat16, backend.device, seed=4))
    check_gelu(impl, backend, x, BF16, reads_guarded=True)


def test_fp32_non_contiguous(impl, backend):
    # A transposed view: walking its memory in order does not visit x[0, 0], x[0, 1], ...
    x = uniform((123, 5), torch.float32, backend.device, seed=5).t()
    check_gelu(impl, backend, x, FP32)


def test_fp32_large_magnitudes(impl, backend):
    # |x| from 20 to 100, both signs: z = sqrt(2/pi)(x + 0.044715 x^3) is 300 or more, so
    # exp(2z) is inf in fp32. Through the sigmoid, tanh is then exactly +-1 and y is x or 0;
    # tanh written as (e^2z - 1) / (e^2z + 1) is inf / inf = NaN.
    generator = torch.Generator().manual_seed(6)
    magnitude = 20 + 80 * torch.rand(1500, generator=generator)
    sign = torch.where(torch.rand(1500, generator=generator) < 0.5, -1.0, 1.0)
    x, _ = guarded((sign * magnitude).to(backend.device))
    check_gelu(impl, backend, x, FP32, reads_guarded=True)


def test_fp32_constants_in_full(impl, backend):
    # [-3, 3], where a change in sqrt(2/pi) or 0.044715 moves y the most (near x = -1.4 and
    # -1.9), under a tolerance tight enough to see sqrt(2/pi) rounded to 0.7978 or 0.044715 to
    # 0.0447 (see CONSTANTS).
    generator = torch.Generator().manual_seed(7)
    x, _ = guarded((torch.rand(2000, generator=generator) * 6 - 3).to(backend.device))
    check_gelu(impl, backend, x, CONSTANTS, reads_guarded=True)
