"""Tests for drill F4: apply_rope, the NeoX rotary embedding, on contiguous and sliced qkv.

Every check compares with a torch reference computed here in fp32 and rounded the way the
backend rounds; on a mismatch it compares with what each known mistake would produce (GPT-J
pairs, the row index as position, the rotation the wrong way, cos and sin swapped), so the
failure names the mistake. Positions are random and never 0..T-1, the caches sit in NaN guards,
head sizes whose half is not a power of two leave padded lanes, and the qkv tests give q and k
as the strided views a fused projection really produces.
"""

from __future__ import annotations

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
)

DRILL = "f4"

BASE = 10000.0  # the usual RoPE base; any base works, the caches are what the kernel sees
N_POSITIONS = 97  # rows in the caches (P): more than any test's T, not a power of two
DTYPES = [torch.float32, torch.bfloat16]
DTYPE_IDS = ["fp32", "bf16"]

# fp32: each output is two products and a sum of values below ~8; the GPU fuses them into one
# FMA, which moves the result by an fp32 ulp or two (~1e-6 here).
ROPE_FP32 = Tolerance(atol=1e-5, rtol=1e-5)
# bf16 outputs: one ulp (2**-7 relative at most) when the fp32 value sits next to a rounding
# boundary; atol for results that cancel to nearly zero.
ONE_BF16_ULP = Tolerance(atol=1e-5, rtol=2**-7)

# [T, H, D]: D/2 = 32 (a full block), 20 (12 padded lanes) and 64 (the LLaMA head size).
SHAPES = {
    "t6-h3-d64": (6, 3, 64),
    "t5-h5-d40": (5, 5, 40),
    "t4-h8-d128": (4, 8, 128),
}


def _tol(dtype: torch.dtype) -> Tolerance:
    return ROPE_FP32 if dtype == torch.float32 else ONE_BF16_ULP


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def make_caches(head_dim: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [P, D/2] in fp32, as a model builds them, each inside a NaN guard."""
    inv_freq = 1.0 / BASE ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.outer(torch.arange(N_POSITIONS, dtype=torch.float64), inv_freq)
    cos, _ = guarded(angles.cos().float().to(device))
    sin, _ = guarded(angles.sin().float().to(device))
    return cos, sin


def make_positions(n_tokens: int, device: str, seed: int) -> torch.Tensor:
    """Random positions < P, none equal to its row index: a batch of sequences mid-decode."""
    gen = torch.Generator().manual_seed(seed)
    positions = torch.randint(0, N_POSITIONS, (n_tokens,), generator=gen)
    rows = torch.arange(n_tokens)
    positions = torch.where(positions == rows, positions + 1, positions)
    return positions.to(device)


def make_x(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (2 * torch.randn(shape, generator=gen)).to(device, dtype)


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake would produce
# ----------------------------------------------------------------------------------------------


def rope_fp32(
    x: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    positions: torch.Tensor,
    *,
    signs: tuple[float, float] = (-1.0, 1.0),
) -> torch.Tensor:
    """NeoX halves in fp32: out1 = x1 c + signs[0] x2 s, out2 = x2 c + signs[1] x1 s."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[positions][:, None, :], sin[positions][:, None, :]
    return torch.cat((x1 * c + signs[0] * x2 * s, x2 * c + signs[1] * x1 * s), dim=-1)


def rope_gptj_fp32(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    """GPT-J pairs in fp32: lanes 2i and 2i + 1 rotated by the angle of frequency i."""
    even, odd = x[..., 0::2].float(), x[..., 1::2].float()
    c, s = cos[positions][:, None, :], sin[positions][:, None, :]
    return torch.stack((even * c - odd * s, odd * c + even * s), dim=-1).flatten(-2)


def expected(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor, backend: Backend
) -> torch.Tensor:
    return round_to(rope_fp32(x, cos, sin, positions), x.dtype, backend)


def suspects(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor, backend: Backend
) -> list[Suspect]:
    rows = torch.arange(x.shape[0], device=positions.device)
    cases = [
        (
            "rope-interleaved",
            rope_gptj_fp32(x, cos, sin, positions),
            "GPT-J's pairing: lanes 2i and 2i+1 rotated together, where NeoX pairs lane i with "
            "lane i + D/2",
        ),
        (
            "rope-position",
            rope_fp32(x, cos, sin, rows),
            "the rotation by the angles of row t of the caches, not of row positions[t]",
        ),
        (
            "rope-sign",
            rope_fp32(x, cos, sin, positions, signs=(1.0, -1.0)),
            "the rotation by minus the angle: out1 = x1*c + x2*s, out2 = x2*c - x1*s",
        ),
        (
            "rope-interleaved",
            rope_gptj_fp32(x, cos, sin, rows),
            "GPT-J's pairing (lanes 2i and 2i+1), and the angles of row t instead of positions[t]",
        ),
        (
            "rope-cos-sin",
            rope_fp32(x, sin, cos, positions),
            "the rotation with cos and sin swapped: out1 = x1*s - x2*c, out2 = x2*s + x1*c",
        ),
    ]
    # A sign flipped in one half only is no rotation the wrong way: its ladder says so.
    one_half = (
        (
            "rope-sign",
            rope_fp32(x, cos, sin, positions, signs=(1.0, 1.0)),
            "out1 = x1*c + x2*s: the sign of the x2*s term is flipped in the first half",
        ),
        (
            "rope-sign",
            rope_fp32(x, cos, sin, positions, signs=(-1.0, -1.0)),
            "out2 = x2*c - x1*s: the sign of the x1*s term is flipped in the second half",
        ),
    )
    return [
        *(Suspect(d, round_to(v, x.dtype, backend), story) for d, v, story in cases),
        *(Suspect(d, round_to(v, x.dtype, backend), s, way="one-half") for d, v, s in one_half),
    ]


def check_out(
    impl: Learner,
    backend: Backend,
    out: object,
    x_in: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    positions: torch.Tensor,
) -> None:
    expect_close(
        out,
        expected(x_in, cos, sin, positions, backend),
        what="out",
        tol=_tol(x_in.dtype),
        suspects=lambda: suspects(x_in, cos, sin, positions, backend),
        fp32_rerun=lambda: impl.apply_rope(guarded(x_in.float())[0], cos, sin, positions),
        fp32_expected=rope_fp32(x_in, cos, sin, positions),
        reads_guarded=True,
    )


def _looks_right(
    out: object,
    x_in: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    positions: torch.Tensor,
    backend: Backend,
) -> bool:
    want = expected(x_in, cos, sin, positions, backend)
    tol = _tol(x_in.dtype)
    return (
        isinstance(out, torch.Tensor)
        and out.shape == want.shape
        and out.dtype == want.dtype
        and torch.allclose(out.float(), want.float(), atol=tol.atol, rtol=tol.rtol)
    )


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_apply_rope(impl, backend, device, dtype, shape):
    """Contiguous x in a NaN guard; random positions (never the row index); x must not change.

    The halves differ, so GPT-J pairs show; positions[t] != t, so the row index shows; every
    row has angles far from 0 and pi, so a rotation the wrong way shows.
    """
    x_in = make_x(shape, dtype, device, seed=sum(shape))
    cos, sin = make_caches(shape[-1], device)
    positions = make_positions(shape[0], device, seed=shape[0])
    x, buffer = guarded(x_in)
    before = buffer.clone()

    out = impl.apply_rope(x, cos, sin, positions)

    expect_unchanged(buffer, before, what="the input x")
    check_out(impl, backend, out, x_in, cos, sin, positions)


# How a fused qkv projection lays out its output, and the q or k view a model takes of it.
# "[T, 3, H, D]" (LLaMA-style, after qkv.view(T, 3, H, D)): heads D apart, tokens 3*H*D apart.
# "[T, H, 3, D]" (GPT-NeoX's query_key_value, per head): heads 3*D apart.
QKV_LAYOUTS = {
    "q-of-t3hd": ("[T, 3, H, D]", 0),
    "k-of-t3hd": ("[T, 3, H, D]", 1),
    "q-of-th3d": ("[T, H, 3, D]", 0),
}


def _sliced(values: torch.Tensor, layout: str, part: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`values` [T, H, D] as part `part` of a guarded fused qkv tensor with that layout.

    The other two parts hold other random values, so reading them gives wrong, finite numbers.
    """
    n_tokens, n_heads, head_dim = values.shape
    gen = torch.Generator().manual_seed(7)
    if layout == "[T, 3, H, D]":
        qkv = torch.randn(n_tokens, 3, n_heads, head_dim, generator=gen).to(values)
        qkv[:, part] = values
        stored, buffer = guarded(qkv)
        return stored[:, part], buffer
    qkv = torch.randn(n_tokens, n_heads, 3, head_dim, generator=gen).to(values)
    qkv[:, :, part] = values
    stored, buffer = guarded(qkv)
    return stored[:, :, part], buffer


@pytest.mark.parametrize("layout", list(QKV_LAYOUTS), ids=list(QKV_LAYOUTS))
def test_apply_rope_qkv_slice(impl, backend, device, layout):
    """x is q or k of a fused qkv tensor: tokens 3*H*D apart, heads D or 3*D apart.

    The same values are first given as a contiguous tensor: right there and wrong here means
    the kernel assumes where the heads and tokens are instead of using x's strides.
    """
    shape = (5, 3, 40)
    x_in = make_x(shape, torch.bfloat16, device, seed=11)
    cos, sin = make_caches(shape[-1], device)
    positions = make_positions(shape[0], device, seed=12)
    described, part = QKV_LAYOUTS[layout]
    x, buffer = _sliced(x_in, described, part)
    before = buffer.clone()
    works_contiguous = _looks_right(
        impl.apply_rope(guarded(x_in)[0], cos, sin, positions), x_in, cos, sin, positions, backend
    )

    out = impl.apply_rope(x, cos, sin, positions)

    token_stride, head_stride = x.stride(0), x.stride(1)
    if works_contiguous and not _looks_right(out, x_in, cos, sin, positions, backend):
        raise DrillFailure(
            "head-stride",
            f"out is wrong when x is part {part} of a fused qkv laid out {described} (tokens "
            f"{token_stride} and heads {head_stride} elements apart), though the same values in "
            f"a contiguous [T, H, D] tensor (tokens {shape[1] * shape[2]}, heads {shape[2]} "
            "apart) came out right",
            "A slice of qkv is not contiguous: pass x.stride(0) and x.stride(1) to the kernel "
            "and step tokens and heads by them.",
        )
    expect_unchanged(buffer, before, what="the qkv tensor x is a view of")
    check_out(impl, backend, out, x_in, cos, sin, positions)
