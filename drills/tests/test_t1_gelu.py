"""Tests for drill t1: `gelu_tanh(x)`, the tanh-approximate GELU written through the sigmoid.

Inputs are spread over [-6, 6], where the exact (erf) GELU and the tanh form differ by up to
4.7e-4 and every wrong tanh identity is far off; sizes leave the last block partly filled. The
suspects below are what each known mistake would output, so a failure names the mistake.
Tensors the learner allocates sit between runs of sentinel values: an unmasked store lands there
(and is named `missing-mask`) instead of in memory the process does not own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from tutor.harness import Backend, Suspect, Tolerance, expect_close, guarded, round_to

DRILL = "t1"

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
CUBIC = 0.044715

# fp32: the GPU's sigmoid goes through an approximate exp2 (a few ulp, ~1e-6 relative); the
# erf form, the closest wrong answer, is 47x this tolerance away on [-6, 6].
FP32 = Tolerance(atol=1e-5, rtol=1e-5)
# bf16: the reference is rounded as the backend rounds, but a kernel's fp32 value may sit on the
# other side of a rounding boundary: one bf16 ulp is at most 2**-7 of the value.
BF16 = Tolerance(atol=1e-5, rtol=2**-7)


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


def suspects(x: torch.Tensor, backend: Backend) -> list[Suspect]:
    """Every known mistake's output on x, rounded to x's dtype as the backend rounds."""
    x64 = x.double()
    return [
        Suspect(diagnosis, round_to(mistake(x64), x.dtype, backend), story)
        for diagnosis, mistake, story in _MISTAKES
    ]


def uniform(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    """Values spread evenly over [-6, 6]: the range where every mistake above shows."""
    generator = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=generator) * 12 - 6).to(dtype).to(device)


def check_gelu(
    impl, backend: Backend, x: torch.Tensor, tol: Tolerance, *, reads_guarded: bool = False
) -> None:
    y = impl.gelu_tanh(x)
    what = f"output for a {str(x.dtype).removeprefix('torch.')} x of shape {tuple(x.shape)}"
    expect_close(
        y,
        round_to(gelu_tanh_reference(x), x.dtype, backend),
        what=what,
        tol=tol,
        suspects=suspects(x, backend),
        fp32_rerun=lambda: impl.gelu_tanh(x.float()),
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
