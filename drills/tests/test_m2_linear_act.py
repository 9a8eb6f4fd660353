"""Tests for drill M2: y = gelu_tanh(x @ w.T + b) with the bias and GELU fused after the K loop.

References are computed in fp64 from exactly the values the kernel loads, then rounded the way
the backend rounds. On a mismatch the output is compared with what each classic mistake
computes on the same inputs: the bias indexed by the row (M < N, so b[m] exists and differs),
GELU before the bias, the bias or GELU applied in every K block (K = 300 spans several blocks
of any BLOCK_K up to 256: one suspect per power-of-two BLOCK_K), w read as if it were [K, N]
(N != K), and x @ w.T rounded to y's dtype before the bias (a bias that cancels a large product
makes that rounding show). Every tensor sits in a buffer with NaN around it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    expect_close,
    raise_if_edges_unwritten,
    round_to,
)
from tutor.harness.inputs import guard_value

DRILL = "m2"
# Lanes past K that read 0 add nothing to x @ w.T, and lanes past M or N are never stored: NaN
# from around the inputs that stays wrong with 0 there is no missing mask
# (tutor.harness.drill_plugin).
ZEROS_PAST_END_HARMLESS = True
ROW_STRIDE = "row-stride"

BIAS_AXIS = "bias-axis"
BIAS_ROUNDED = "bias-rounded"
EPILOGUE_ORDER = "epilogue-order"
EPILOGUE_IN_LOOP = "epilogue-in-loop"
WEIGHT_TRANSPOSE = "weight-transpose"

BLOCK_KS = (16, 32, 64, 128, 256)  # the BLOCK_K a learner may pick (tl.dot needs >= 16)


def _tol(dtype: torch.dtype, backend: Backend) -> Tolerance:
    """How far a correct kernel's y may be from the fp64 reference.

    w is scaled by 1/sqrt(K), so v = x @ w.T + b is of size 1-3 and GELU's slope is at most 1.13.
    fp32, CPU: exact products summed in another order, and fp32 GELU: a few 1e-7.
    fp32, GPU: tl.dot's default TF32 (10-bit mantissas) is off by about 5e-4 * |v| rms, a few
    times that at worst; the approximate sigmoid adds a few ulps. The reference solution uses
    "ieee" and is far inside this. Every suspect below moves y by 0.1 or more.
    bf16: the final rounding can move by one ulp (2**-7 relative at most).
    """
    if dtype == torch.float32:
        return (
            Tolerance(atol=1e-5, rtol=1e-5) if backend.is_cpu else Tolerance(atol=5e-3, rtol=2e-3)
        )
    return Tolerance(atol=1e-4, rtol=2**-7)


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def _guarded(values: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of `values` with NaN on both sides, more than any tile overhangs."""
    guard = 257 * max(values.shape)
    buffer = torch.full(
        (values.numel() + 2 * guard,), guard_value(), dtype=values.dtype, device=values.device
    )
    view = buffer[guard : guard + values.numel()].view(values.shape)
    view.copy_(values)
    return view


def _inputs(m: int, k: int, n: int, seed: int, dtype: torch.dtype, device: str):
    """x ~ N(0, 1) [M, K], w ~ N(0, 1/K) [N, K], b ~ N(0, 1) [N]: v = x @ w.T + b is O(1).

    Where GELU bends (v between -3 and 1), so moving the bias or GELU changes y by O(1).
    """
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(m, k, generator=gen)
    w = torch.randn(n, k, generator=gen) / math.sqrt(k)
    b = torch.randn(n, generator=gen)
    return tuple(t.to(device=device, dtype=dtype) for t in (x, w, b))


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake computes instead
# ----------------------------------------------------------------------------------------------


def gelu(v: torch.Tensor) -> torch.Tensor:
    return 0.5 * v * (1 + torch.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """gelu_tanh(x @ w.T + b) in fp64."""
    return gelu(x.double() @ w.double().T + b.double())


def _per_block(
    x: torch.Tensor,
    w: torch.Tensor,
    b: torch.Tensor,
    block: int,
    step: Callable[[torch.Tensor], torch.Tensor],
) -> torch.Tensor:
    """acc = step(acc + x[:, blk] @ w[:, blk].T) for every K block of `block` columns."""
    xd, wd = x.double(), w.double()
    acc = torch.zeros(x.shape[0], w.shape[0], dtype=torch.float64, device=x.device)
    for start in range(0, x.shape[1], block):
        acc = step(acc + xd[:, start : start + block] @ wd[:, start : start + block].T)
    return acc


def _as_k_by_n(w: torch.Tensor) -> torch.Tensor | None:
    """w's memory read as a [K, N] matrix with the strides w has (K, 1): element (k, n) at
    k * K + n. None when that reaches past the end of w (K > N): the test sees NaN then."""
    n, k = w.shape
    index = torch.arange(k)[:, None] * k + torch.arange(n)[None, :]
    if int(index.max()) >= w.numel():
        return None
    return w.reshape(-1)[index.to(w.device)]


SQUARE_TILES = (16, 32, 64, 128)  # a w tile that tl.dot takes untransposed must be square


def _tiles_untransposed(x: torch.Tensor, w: torch.Tensor, block: int) -> torch.Tensor:
    """x @ w.T from square tiles of `block` in which each [BLOCK_N, BLOCK_K] tile of w is
    passed to tl.dot as if it were [BLOCK_K, BLOCK_N] (no tl.trans): c's tile (i, j) sums
    x's tile (i, kb) @ w's tile (j, kb) over the K blocks kb. Edges padded with 0, as masked
    loads give them."""
    (m, k), n = x.shape, w.shape[0]
    up = lambda size: -(-size // block) * block  # noqa: E731
    xp = torch.nn.functional.pad(x.double(), (0, up(k) - k, 0, up(m) - m))
    wp = torch.nn.functional.pad(w.double(), (0, up(k) - k, 0, up(n) - n))
    x_tiles = xp.reshape(up(m) // block, block, up(k) // block, block).permute(0, 2, 1, 3)
    w_tiles = wp.reshape(up(n) // block, block, up(k) // block, block).permute(0, 2, 1, 3)
    c = torch.einsum("ikab,jkbc->ijac", x_tiles, w_tiles)  # [m tiles, n tiles, block, block]
    return c.permute(0, 2, 1, 3).reshape(up(m), up(n))[:m, :n]


def suspects(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, backend: Backend) -> list[Suspect]:
    m, k = x.shape
    n = w.shape[0]
    xd, wd, bd = x.double(), w.double(), b.double()
    xw = xd @ wd.T
    found = [
        (
            BIAS_AXIS,
            gelu(xw + bd[:m, None]),
            f"the bias added along the rows: y[m, n] got b[m] (M = {m}), not b[n]",
        ),
        (
            BIAS_ROUNDED,
            gelu(round_to(xw.float(), x.dtype, backend).double() + bd),
            f"gelu(round(x @ w.T) + b): the product rounded to "
            f"{str(x.dtype).removeprefix('torch.')} before the bias was added",
        ),
        (EPILOGUE_ORDER, gelu(xw) + bd, "gelu(x @ w.T) + b: GELU applied before the bias"),
        (
            WEIGHT_TRANSPOSE,
            gelu(xd @ wd.reshape(k, n) + bd),
            "x @ w.reshape(K, N) + b: w's [N, K] memory read as a [K, N] matrix (a reshape is "
            "not a transpose)",
        ),
    ]
    as_kn = _as_k_by_n(w)
    if as_kn is not None:
        found.append(
            (
                WEIGHT_TRANSPOSE,
                gelu(xd @ as_kn.double() + bd),
                "w's strides used as if w were [K, N]: element (k, n) of the tile read "
                "at k * stride(0) + n * stride(1), which is w[k, n], not w[n, k]",
            )
        )
    for block in SQUARE_TILES:
        found.append(
            (
                WEIGHT_TRANSPOSE,
                gelu(_tiles_untransposed(x, w, block) + bd),
                f"each [BLOCK_N, BLOCK_K] tile of w ({block} x {block}) passed to tl.dot as if "
                "it were [BLOCK_K, BLOCK_N]: the tile is w's rows, and tl.dot(x, w) needs its "
                "transpose",
            )
        )
    for block in BLOCK_KS:
        blocks = -(-k // block)
        if blocks < 2:
            continue
        found += [
            (
                EPILOGUE_IN_LOOP,
                gelu(xw + blocks * bd),
                f"gelu(x @ w.T + {blocks} * b): the bias added in each of the {blocks} K blocks "
                f"(BLOCK_K = {block})",
            ),
            (
                EPILOGUE_IN_LOOP,
                _per_block(x, w, b, block, lambda acc: gelu(acc + bd)),
                f"bias and GELU applied to the running sum after each of the {blocks} K blocks "
                f"(BLOCK_K = {block})",
            ),
            (
                EPILOGUE_IN_LOOP,
                gelu(_per_block(x, w, b, block, gelu) + bd),
                f"GELU applied to the running sum after each of the {blocks} K blocks "
                f"(BLOCK_K = {block})",
            ),
        ]
    return [Suspect(d, round_to(v.float(), x.dtype, backend), story) for d, v, story in found]


def _expect_y(
    y: object,
    want: torch.Tensor,
    *,
    tol: Tolerance,
    **kwargs,
) -> None:
    """expect_close on y, with grid-too-small named from the shape of its unwritten part."""
    try:
        expect_close(y, want, what="y", tol=tol, **kwargs)
    except DrillFailure as failure:
        raise_if_edges_unwritten(failure, y, want, tol, "y")
        raise


def check_linear_gelu(
    impl, backend: Backend, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor
) -> None:
    """y = linear_gelu(x, w, b) on NaN-guarded copies, diagnosed when wrong."""
    y = impl.linear_gelu(_guarded(x), _guarded(w), _guarded(b))
    want = reference(x, w, b).float()
    _expect_y(
        y,
        round_to(want, x.dtype, backend),
        tol=_tol(x.dtype, backend),
        suspects=lambda: suspects(x, w, b, backend),
        fp32_rerun=lambda: impl.linear_gelu(
            _guarded(x.float()), _guarded(w.float()), _guarded(b.float())
        ),
        fp32_expected=want,
        reads_guarded=True,
    )


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------

# (M, K, N): M < N so a bias indexed by the row exists and differs; N != K so reading w as
# [K, N] differs from w.T; K = 300 spans 2-19 K blocks of any BLOCK_K from 256 down to 16.
# None is a multiple of 8: every tile size leaves partial edge tiles and a partial K block.
SHAPES = [
    pytest.param((37, 300, 100), torch.float32, id="37x300x100-fp32"),
    pytest.param((37, 300, 100), torch.bfloat16, id="37x300x100-bf16"),
    pytest.param((5, 300, 21), torch.float32, id="5x300x21-fp32"),
]


@pytest.mark.parametrize(("shape", "dtype"), SHAPES)
def test_linear_gelu(impl, backend, shape, dtype):
    """nn.Linear's layout: x [M, K] and w [N, K] contiguous, b [N]."""
    m, k, n = shape
    x, w, b = _inputs(m, k, n, seed=m + k + n, dtype=dtype, device=backend.device)
    check_linear_gelu(impl, backend, x, w, b)


def test_linear_gelu_bias_cancels_product(impl, backend):
    """bf16, x @ w.T of about +-100 and a bias that cancels it: v = x @ w.T + b is O(1).

    Rounded to bf16 (an ulp of 0.5 at 100) before the bias, x @ w.T moves v by up to 0.25,
    or 0.5 where the conversion truncates; in fp32 it stays within 1e-4.
    """
    m, k, n = 16, 64, 40
    gen = torch.Generator().manual_seed(7)
    x = (1 + 0.1 * torch.randn(m, k, generator=gen)).bfloat16()
    sign = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0)
    size = sign * (60 + 60 * torch.rand(n, generator=gen))  # all from gen: the same in every run
    w = (size[:, None] / k + 0.1 / math.sqrt(k) * torch.randn(n, k, generator=gen)).bfloat16()
    b = -(x.double() @ w.double().T).mean(0)
    b = (b + 0.5 * torch.randn(n, generator=gen)).bfloat16()
    x, w, b = (t.to(backend.device) for t in (x, w, b))
    check_linear_gelu(impl, backend, x, w, b)


def test_linear_gelu_wide_output(impl, backend):
    """N = 100 > K = 48: w's memory read as [K, N] with w's own strides stays inside w.

    So a kernel that walks w as if it were [K, N] gives values the test can recompute (with
    K > N it runs off the end of w and reads NaN).
    """
    x, w, b = _inputs(20, 48, 100, seed=5, dtype=torch.float32, device=backend.device)
    check_linear_gelu(impl, backend, x, w, b)


def test_linear_gelu_strided(impl, backend):
    """x a slice of wider rows and w the transpose of a [K, N] tensor: read through strides."""
    m, k, n = 20, 300, 45
    x_values, w_values, b = _inputs(m, k, n, seed=6, dtype=torch.float32, device=backend.device)

    def laid_out() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x, w, the rows x is cut from), in memory that holds the guard value around them."""
        wide = _guarded(torch.full((m, k + 5), guard_value(), device=backend.device))
        x = wide[:, :k]
        x.copy_(x_values)
        return x, _guarded(w_values.t().contiguous()).t(), wide

    x, w, wide = laid_out()
    y = impl.linear_gelu(x, w, _guarded(b))
    want = reference(x_values, w_values, b).float()

    def named() -> list[Suspect]:
        rows_k_apart = wide.reshape(-1)[: m * k].view(m, k)  # x's memory, rows taken K apart
        return [
            *suspects(x_values, w_values, b, backend),
            Suspect(
                ROW_STRIDE,
                reference(rows_k_apart, w_values, b).float(),
                f"x's rows read as if they were K = {k} apart: x is a slice of rows {k + 5} "
                "long, so row r starts r * x.stride(0) in, and the rows after the first took "
                "in the slack between them",
            ),
        ]

    _expect_y(
        y,
        want,
        tol=_tol(torch.float32, backend),
        suspects=named,
        reads_guarded=True,
    )


def test_linear_gelu_aligned_rows(impl, backend):
    """bf16 rows whose lengths are multiples of 16 bytes (K = 328, N = 112), as a model's
    activations and weights are: a kernel may take another path for them (tensor descriptors
    need such rows). Tiles of 32 and more still leave edge tiles and a partial last K block."""
    x, w, b = _inputs(96, 328, 112, seed=13, dtype=torch.bfloat16, device=backend.device)
    check_linear_gelu(impl, backend, x, w, b)
