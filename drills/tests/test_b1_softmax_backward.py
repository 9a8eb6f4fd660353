"""Tests for drill b1: `softmax_backward(y, dy)`, dx = y * (dy - sum(dy * y)) row by row.

y is always a real softmax output (rows that sum to 1, from random logits) and dy a random
gradient; the reference is computed in float64 from exactly the values the kernel loads. Three
kinds of rows, each there to make a mistake visible:
- ordinary rows: logits randn * 2, dy randn;
- rows where dy has a mean of 1.5: sum(dy * y) is then about 1.5, so dx = y * dy without the
  row sum is far off, and sum(dy) (about 1.5 N) in place of sum(dy * y) even further;
- rows where dy is the same number everywhere: dx is 0 (up to rounding), because softmax
  does not change when a constant is added to every logit. Any mistake in the sum shows.
N is never a power of two nor a multiple of 16, so every block size leaves padded lanes: a
kernel whose padded lanes enter the row sum (y or dy loaded with other=1.0, or other=-inf as
in the forward, which makes 0 * -inf = NaN) is named `padding-in-sum`. Inputs sit next to NaN
(guarded, or rows with NaN slack after them), so a load without a mask turns rows NaN
(`missing-mask`); tensors the learner allocates sit between sentinel values.
"""

from __future__ import annotations

import torch

from tutor.harness import Backend, Suspect, Tolerance, expect_close, guarded, round_to, row_sliced
from tutor.harness import diagnoses as dx

DRILL = "b1"

# fp32: dx = y * (dy - S). The dot product S of N terms is summed in another order than here
# (and with fused multiply-adds on the GPU): off by a few 1e-7 of sum |dy * y| <= about 3, so dx
# is off by up to y * 1e-6 where dy - S cancels. Every suspect moves dx by y * 0.1 or more.
FP32 = Tolerance(atol=1e-6, rtol=1e-5)
# bf16: the reference is rounded as the backend rounds, but a kernel's fp32 value may sit on the
# other side of a rounding boundary: one bf16 ulp is at most 2**-7 of the value.
BF16 = Tolerance(atol=1e-6, rtol=2**-7)

ORDINARY, OFFSET, CONSTANT = range(3)


def _tol(dtype: torch.dtype) -> Tolerance:
    return FP32 if dtype == torch.float32 else BF16


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake computes instead (float64, any shape, rows on the last dim)
# ----------------------------------------------------------------------------------------------


def backward_reference(y: torch.Tensor, dy: torch.Tensor, extra: float = 0.0) -> torch.Tensor:
    """y * (dy - (sum(dy * y) + extra)): `extra` is what padded lanes add to the sum."""
    y, dy = y.double(), dy.double()
    dot = (dy * y).sum(-1, keepdim=True) + extra
    return y * (dy - dot)


def padded_lane_counts(n: int) -> list[int]:
    """Padded lanes for every block size a kernel may use: 16 up to next_power_of_2(N), or up
    to 8192 for a kernel that loops over a row in blocks larger than a short row."""
    counts, block = [], 16
    while block < max(2 * n, 8193):
        counts.append(-(-n // block) * block - n)
        block *= 2
    return sorted(set(counts))


def suspects(
    y: torch.Tensor,
    dy: torch.Tensor,
    backend: Backend,
    *,
    nan_padding: bool = True,
    misread: list[tuple[torch.Tensor, torch.Tensor]] = (),
) -> list[Suspect]:
    """Every mistake's dx. `nan_padding`: offer the all-NaN and all -inf outputs of padded lanes
    loaded as -inf (only where a missing mask cannot give the same picture: contiguous inputs
    of several rows, where an unmasked load reads the next row and only the last row meets the
    NaN guard). `misread`: (y, dy) as a kernel with a wrong row stride would read them."""
    yd, dyd = y.double(), dy.double()
    found: list[Suspect] = []

    def add(diagnosis: str, value: torch.Tensor, story: str) -> None:
        found.append(Suspect(diagnosis, round_to(value, dy.dtype, backend), story))

    add("dot-missing", yd * dyd, "y * dy: the row sum sum(dy * y) is not subtracted")
    # No ladder of its own: on long rows it is y * dy within the tolerance, and there it
    # contests dot-missing's claim (which the learner's kernel, subtracting a sum, would deny).
    add(
        dx.MISMATCH,
        yd * (dyd - (dyd * yd).mean(-1, keepdim=True)),
        "y * (dy - sum(dy * y) / N): the row sum divided by the row's length, a mean where "
        "the sum belongs",
    )
    add(
        "dx-sign",
        -backward_reference(yd, dyd),
        "y * (sum(dy * y) - dy): the difference the wrong way round, every dx negated",
    )
    add(
        "sum-over-dy",
        yd * (dyd - dyd.sum(-1, keepdim=True)),
        "y * (dy - sum(dy)): the row sum is over dy, not over dy * y",
    )
    for count in padded_lane_counts(y.shape[-1]):
        add(
            "padding-in-sum",
            backward_reference(yd, dyd, extra=float(count)),
            f"the row sum with {count} padded lanes adding 1 * 1 each (loaded with other=1.0)",
        )
    if nan_padding:
        add(
            "padding-in-sum",
            torch.full_like(yd, float("nan")),
            "NaN everywhere: padded lanes of y or dy loaded as -inf (as in the forward) give "
            "0 * -inf = NaN in the row sum",
        )
        add(
            "padding-in-sum",
            torch.full_like(yd, float("-inf")),
            "-inf everywhere: padded lanes of y and dy loaded as -inf give -inf * -inf = +inf "
            "in the row sum",
        )
    for y_read, dy_read in misread:
        add(
            dx.ROW_STRIDE,
            backward_reference(y_read, dy_read),
            "what rows read at the wrong row stride would give (N, or the other tensor's "
            "stride, in place of each tensor's own)",
        )
    return found


def misreadings(y: torch.Tensor, dy: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(y, dy) as read with every wrong choice of row strides among N, y's and dy's own."""
    n = y.shape[-1]
    y_rows, dy_rows = y.reshape(-1, n), dy.reshape(-1, n)
    strides = sorted({n, y_rows.stride(0), dy_rows.stride(0)})
    out = []
    for sy in strides:
        for sd in strides:
            if (sy, sd) == (y_rows.stride(0), dy_rows.stride(0)):
                continue
            try:
                out.append(
                    (
                        y_rows.as_strided(y_rows.shape, (sy, 1)).reshape(y.shape),
                        dy_rows.as_strided(dy_rows.shape, (sd, 1)).reshape(y.shape),
                    )
                )
            except RuntimeError:  # past the end of the storage: no such reading to offer
                continue
    return out


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def make_pair(shape: tuple[int, ...], seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """y = softmax(logits) and dy, float32, rows cycling through the kinds of the docstring."""
    gen = torch.Generator().manual_seed(seed)
    *lead, n = shape
    logits = torch.randn(*lead, n, generator=gen).reshape(-1, n)
    dy = torch.randn(logits.shape, generator=gen)
    kinds = torch.arange(logits.shape[0]) % 3
    logits[kinds == ORDINARY] *= 2.0
    logits[kinds == OFFSET] *= 3.0
    dy[kinds == OFFSET] += 1.5
    dy[kinds == CONSTANT] = 0.75
    y = torch.softmax(logits.double(), dim=-1).float()
    return y.reshape(shape), dy.reshape(shape)


def _as(t: torch.Tensor, dtype: torch.dtype, device: str) -> torch.Tensor:
    return t.to(dtype=dtype, device=device)


def check_backward(
    impl,
    backend: Backend,
    y: torch.Tensor,
    dy: torch.Tensor,
    *,
    nan_padding: bool = True,
    reads_guarded: bool = True,
    misread: list[tuple[torch.Tensor, torch.Tensor]] = (),
) -> None:
    got = impl.softmax_backward(y, dy)
    expect_close(
        got,
        round_to(backward_reference(y, dy), dy.dtype, backend),
        what=f"dx for {str(dy.dtype).removeprefix('torch.')} y and dy of shape {tuple(y.shape)}",
        tol=_tol(dy.dtype),
        suspects=lambda: suspects(y, dy, backend, nan_padding=nan_padding, misread=misread),
        fp32_rerun=lambda: impl.softmax_backward(y.float(), dy.float()),
        fp32_expected=backward_reference(y, dy).float(),
        reads_guarded=reads_guarded,
    )


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


def test_fp32_rows(impl, backend):
    # N = 999: 25 padded lanes in a block of 1024. Two rows of each kind; NaN after the end.
    y, dy = make_pair((6, 999), seed=1)
    y, _ = guarded(_as(y, torch.float32, backend.device))
    dy, _ = guarded(_as(dy, torch.float32, backend.device))
    check_backward(impl, backend, y, dy)


def test_fp32_short_rows(impl, backend):
    # N = 37: 27 of 64 lanes are padding.
    y, dy = make_pair((3, 37), seed=2)
    y, _ = guarded(_as(y, torch.float32, backend.device))
    dy, _ = guarded(_as(dy, torch.float32, backend.device))
    check_backward(impl, backend, y, dy)


def test_bf16_rows_3d(impl, backend):
    # Leading dims (2, 3) must come back in dx's shape. y is rounded to bf16, so its rows sum to
    # 1 only to about 1e-3: the reference uses the rounded values, as the kernel does.
    y, dy = make_pair((2, 3, 301), seed=3)
    y, _ = guarded(_as(y, torch.bfloat16, backend.device))
    dy, _ = guarded(_as(dy, torch.bfloat16, backend.device))
    check_backward(impl, backend, y, dy)


def test_fp32_strided_rows(impl, backend):
    # y = base[:, :701] with 64 NaN after each row (stride 765), dy with 24 (stride 725): each
    # tensor needs its own row stride, and a load without a mask reads NaN. An unmasked load
    # reads NaN in every row here, so the all-NaN padding suspects are not offered.
    y, dy = make_pair((4, 701), seed=4)
    y, _ = row_sliced(_as(y, torch.float32, backend.device), slack=64)
    dy, _ = row_sliced(_as(dy, torch.float32, backend.device), slack=24)
    check_backward(impl, backend, y, dy, nan_padding=False, misread=misreadings(y, dy))


def test_bf16_strided_y(impl, backend):
    # y row-sliced (stride 1065), dy contiguous (stride 1001): one stride for both is wrong.
    y, dy = make_pair((3, 1001), seed=5)
    y, _ = row_sliced(_as(y, torch.bfloat16, backend.device), slack=64)
    dy, _ = guarded(_as(dy, torch.bfloat16, backend.device))
    check_backward(impl, backend, y, dy, nan_padding=False, misread=misreadings(y, dy))


def test_fp32_transposed(impl, backend):
    # Transposed views: neighbours along the last dim are 3 elements apart in memory, not 1.
    y, dy = make_pair((3, 129), seed=6)
    y = _as(y, torch.float32, backend.device).t().contiguous().t()
    dy = _as(dy, torch.float32, backend.device).t().contiguous().t()
    check_backward(impl, backend, y, dy, reads_guarded=False)


def test_fp32_one_dimensional(impl, backend):
    # No leading dims: one row. (A single row is also the last one: an unmasked load meets the
    # NaN guard there, so the all-NaN padding suspects are not offered.)
    y, dy = make_pair((1, 1501), seed=7)
    y, _ = guarded(_as(y.reshape(1501), torch.float32, backend.device))
    dy, _ = guarded(_as(dy.reshape(1501), torch.float32, backend.device))
    check_backward(impl, backend, y, dy, nan_padding=False)
