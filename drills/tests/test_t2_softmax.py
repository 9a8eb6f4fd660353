"""Tests for drill t2: `softmax(x)`, row-wise over the last dimension, one program per row.

Every input mixes four kinds of rows, each there to expose one mistake:
- ordinary rows (randn * 2): the plain case;
- rows near +1000 and near -1000: exp(x) overflows (or underflows) in fp32 unless the row max
  is subtracted first, so a kernel without it returns NaN there;
- rows that are all negative (in [-5, -1]): a padded lane loaded as 0 becomes the row max and
  adds exp(0 - 0) = 1 to the sum, so zero padding shrinks every output.
N is never a power of two, so every row has padded lanes. One more test has rows with a few
values 100 to 200 above the rest, so exp(x - c) overflows for any c but the row max (the mean,
the first element). Row-sliced inputs are also compared with what rows read N apart would give
(`row-stride`). Inputs are followed by NaN (or have
NaN slack after each row), so a load without a mask turns rows NaN; tensors the learner
allocates sit between runs of sentinel values, so an unmasked store lands there. Both are
named `missing-mask`.
"""

from __future__ import annotations

import torch

from tutor.harness import Backend, Suspect, Tolerance, expect_close, guarded, round_to, row_sliced
from tutor.harness.inputs import same_layout

DRILL = "t2"

# fp32: outputs are at most 1; the GPU's exp is approximate (a few ulp, ~1e-6 relative for the
# arguments here) and the sum is taken in another order than torch's.
FP32 = Tolerance(atol=1e-6, rtol=1e-5)
# bf16: the reference is rounded as the backend rounds, but a kernel's fp32 value may sit on the
# other side of a rounding boundary: one bf16 ulp is at most 2**-7 of the value.
BF16 = Tolerance(atol=1e-6, rtol=2**-7)


def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim in float64, returned as float32."""
    return torch.softmax(x.double(), dim=-1).float()


def zero_padded_softmax(x: torch.Tensor) -> torch.Tensor:
    """What a kernel computes when the lanes past N (up to next_power_of_2(N)) load as 0."""
    n = x.shape[-1]
    block_n = 1 << (n - 1).bit_length()
    padded = torch.nn.functional.pad(x.double(), (0, block_n - n), value=0.0)
    e = torch.exp(padded - padded.amax(dim=-1, keepdim=True))
    return (e / e.sum(dim=-1, keepdim=True))[..., :n].float()


def unshifted_softmax(x: torch.Tensor) -> torch.Tensor:
    """exp of the raw input in float32, as a kernel without the max subtraction computes it:
    exp(1000) = inf gives inf / inf = NaN, exp(-1000) = 0 gives 0 / 0 = NaN."""
    e = torch.exp(x.float())
    return e / e.sum(dim=-1, keepdim=True)


def shifted_softmax(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """exp(x - shift) / sum in float32, shift one value per row that is not the row max: exact
    (softmax ignores the shift) until some x - shift passes 88.7, where exp is inf and the
    output NaN (inf / inf) in that lane and 0 (finite / inf) in the others."""
    e = torch.exp(x.float() - shift.float())
    return e / e.sum(dim=-1, keepdim=True)


def suspects(
    x: torch.Tensor, backend: Backend, rows_n_apart: torch.Tensor | None = None
) -> list[Suspect]:
    """What each known mistake outputs on x. `rows_n_apart`: for a row-sliced x, the rows a
    kernel reads when it steps N (not the row stride) from one row to the next."""
    found = [
        Suspect(
            "no-max-subtraction",
            round_to(shifted_softmax(x, x.float().mean(dim=-1, keepdim=True)), x.dtype, backend),
            "exp(x - mean of the row): it overflows where x is more than 88 above the mean",
        ),
        Suspect(
            "no-max-subtraction",
            round_to(shifted_softmax(x, x[..., :1]), x.dtype, backend),
            "exp(x - first element of the row): it overflows where x is more than 88 above it",
        ),
    ]
    if rows_n_apart is not None:
        found.append(
            Suspect(
                "row-stride",
                round_to(softmax_reference(rows_n_apart), x.dtype, backend),
                "what rows read N elements apart would give: the row stride is not N here",
            )
        )
    return found + [
        Suspect(
            "padding-neg-inf",
            round_to(zero_padded_softmax(x), x.dtype, backend),
            "a softmax whose padded lanes were 0: they entered the max and the sum",
        ),
        Suspect(
            "no-max-subtraction",
            round_to(unshifted_softmax(x), x.dtype, backend),
            "exp of the raw input: NaN where exp overflows or every term underflows",
        ),
    ]


def mixed_rows(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    """Rows cycling through ordinary, near +1000, all negative, near -1000 (see the docstring)."""
    generator = torch.Generator().manual_seed(seed)
    *lead, n = shape
    rows = torch.randn(*lead, n, generator=generator).reshape(-1, n)
    kinds = torch.arange(rows.shape[0]) % 4
    noise = rows.clone()
    rows[kinds == 0] = 2.0 * noise[kinds == 0]
    rows[kinds == 1] = 1000.0 + 3.0 * noise[kinds == 1]
    rows[kinds == 2] = -1.0 - 4.0 * torch.rand(int((kinds == 2).sum()), n, generator=generator)
    rows[kinds == 3] = -1000.0 + 3.0 * noise[kinds == 3]
    return rows.reshape(shape).to(dtype).to(device)


def n_apart(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The rows a kernel reads from a row-sliced x if it takes N as the row stride."""
    return rows.reshape(-1)[: x.numel()].reshape(x.shape)


def check_softmax(
    impl,
    backend: Backend,
    x: torch.Tensor,
    tol: Tolerance,
    *,
    reads_guarded: bool = False,
    rows_n_apart: torch.Tensor | None = None,
) -> None:
    y = impl.softmax(x)
    expect_close(
        y,
        round_to(softmax_reference(x), x.dtype, backend),
        what=f"output for a {str(x.dtype).removeprefix('torch.')} x of shape {tuple(x.shape)}",
        tol=tol,
        suspects=lambda: suspects(x, backend, rows_n_apart),
        # The re-run keeps x's strides (and guards): a stride mistake fails it too.
        fp32_rerun=lambda: impl.softmax(same_layout(x, torch.float32)),
        fp32_expected=softmax_reference(x.float()),
        reads_guarded=reads_guarded,
    )


def test_fp32_every_kind_of_row(impl, backend):
    # N = 1000: 24 padded lanes in a block of 1024. Two rows of each kind. NaN follows the
    # last row, so a load without a mask shows there.
    x, _ = guarded(mixed_rows((8, 1000), torch.float32, backend.device, seed=1))
    check_softmax(impl, backend, x, FP32, reads_guarded=True)


def test_fp32_rows_in_no_round_number(impl, backend):
    # 37 rows, a prime: a kernel that takes several rows a program and counts its programs with
    # M // ROWS leaves the last rows unwritten here (the other tests have 8 rows or fewer).
    x, _ = guarded(mixed_rows((37, 64), torch.float32, backend.device, seed=9))
    check_softmax(impl, backend, x, FP32, reads_guarded=True)


def test_fp32_short_rows(impl, backend):
    # N = 37: 27 of 64 lanes are padding, so zero padding dominates an all-negative row's sum.
    x, _ = guarded(mixed_rows((4, 37), torch.float32, backend.device, seed=2))
    check_softmax(impl, backend, x, FP32, reads_guarded=True)


def test_fp32_strided_rows_3d(impl, backend):
    # base[..., :300] with 7 NaN after each row: the row stride is 307, and a load without a mask
    # reads NaN. The leading dims (2, 2) must come back in the output's shape.
    x, rows = row_sliced(mixed_rows((2, 2, 300), torch.float32, backend.device, seed=3))
    check_softmax(impl, backend, x, FP32, reads_guarded=True, rows_n_apart=n_apart(x, rows))


def test_bf16_3d(impl, backend):
    x, _ = guarded(mixed_rows((2, 4, 150), torch.bfloat16, backend.device, seed=4))
    check_softmax(impl, backend, x, BF16, reads_guarded=True)


def test_bf16_strided_rows(impl, backend):
    x, rows = row_sliced(mixed_rows((4, 200), torch.bfloat16, backend.device, seed=5))
    check_softmax(impl, backend, x, BF16, reads_guarded=True, rows_n_apart=n_apart(x, rows))


def test_fp32_transposed(impl, backend):
    # A transposed view: neighbours along the last dim are 4 elements apart in memory, not 1.
    x = mixed_rows((4, 37), torch.float32, backend.device, seed=6).t().contiguous().t()
    check_softmax(impl, backend, x, FP32)


def test_fp32_one_dimensional(impl, backend):
    # No leading dims at all: one row.
    x, _ = guarded(mixed_rows((1, 999), torch.float32, backend.device, seed=7).reshape(999))
    check_softmax(impl, backend, x, FP32, reads_guarded=True)


def test_fp32_rows_with_outliers(impl, backend):
    # Rows of randn * 2 with 3 values 100 to 200 above the rest (never the first element): the
    # softmax is the outliers', and exp(x - c) overflows for every c but the row max, e.g. the
    # mean or the first element, which the rows above do not show (their spread is ~15).
    generator = torch.Generator().manual_seed(8)
    rows = 2.0 * torch.randn(6, 300, generator=generator)
    for r in range(rows.shape[0]):
        at = 1 + torch.randperm(299, generator=generator)[:3]
        rows[r, at] += 100.0 + 100.0 * torch.rand(3, generator=generator)
    x, _ = guarded(rows.to(backend.device))
    check_softmax(impl, backend, x, FP32, reads_guarded=True)
