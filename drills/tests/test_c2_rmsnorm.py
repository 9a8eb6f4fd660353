"""Drill c2: RMSNorm in CUDA C++, the row's sum of squares reduced by warp shuffles and shared
memory. The kernels run on the GPU (NVRTC) or on the CPU (the system C++ compiler), and a deep
check runs each in the sanitizer builds for races and out-of-bounds accesses."""

from __future__ import annotations

import torch

from tutor.harness import Suspect, Tolerance, expect_clean, expect_close, round_to, row_sliced

DRILL = "c2"
# bf16 output: one ulp of the result (the fp32 sum's order differs from torch's)
BF16 = Tolerance(atol=1e-2, rtol=8e-3)


def _reference(x: torch.Tensor, w: torch.Tensor, eps: float, backend) -> torch.Tensor:
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return round_to(xf * rstd * w.float(), x.dtype, backend)


def _inputs(rows: int, n: int, device: str, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.randn(rows, n, generator=gen) * 2 + 0.5).to(torch.bfloat16)
    w = (torch.rand(n, generator=gen) + 0.5).to(torch.bfloat16)
    return x.to(device), w.to(device)


def test_rows_wider_than_the_block(impl, backend):
    """Three rows of 1000 columns: every thread takes several columns."""
    x, w = _inputs(3, 1000, backend.device)
    y = impl.rms_norm(x, w, 1e-6)
    expect_close(
        y,
        _reference(x, w, 1e-6, backend),
        what="y",
        tol=BF16,
        suspects=lambda: [
            Suspect(
                "divide-by-threads",
                _reference_scaled(x, w, 1e-6, backend, 1000 / 256),
                "the mean taken as the sum divided by blockDim.x instead of n_cols",
            )
        ],
    )


def _reference_scaled(x, w, eps, backend, factor):
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).sum(-1, keepdim=True) / (x.shape[-1] / factor) + eps)
    return round_to(xf * rstd * w.float(), x.dtype, backend)


def test_rows_narrower_than_a_warp_and_sliced_rows(impl, backend):
    """Rows of 20 columns (most lanes have nothing), read from rows 33 columns apart."""
    x, w = _inputs(4, 20, backend.device, seed=1)
    view, _base = row_sliced(x, slack=13)
    y = impl.rms_norm(view, w, 1e-5)
    expect_close(y, _reference(x, w, 1e-5, backend), what="y", tol=BF16)


def test_no_race_and_no_access_outside_the_buffers(impl, backend):
    """The same call in the sanitizer builds (on the CPU): no two threads touch shared memory
    without a barrier between them, and no thread reads past a buffer or a __shared__ array."""
    x, w = _inputs(2, 300, backend.device, seed=2)
    expect_clean(impl, "rms_norm", x, w, 1e-6)
