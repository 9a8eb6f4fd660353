#!/usr/bin/env python3
"""Does telling the cache what to keep help the norms? LayerNorm and RMSNorm at 4096 x 8192 bf16.

    python scripts/tune_cache_hints.py

Every program re-reads the weights (and LayerNorm's bias) that every other program reads too,
while x is read once and y written once. The variants ask the L2 to drop x early
(`eviction_policy="evict_first"`) and keep the weights (`"evict_last"`). GPU only.
"""

# ruff: noqa: B023 - each lambda is timed at once, inside the loop that defines it
from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def _layer_norm(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    stride,
    n_cols,
    eps,
    BLOCK_N: tl.constexpr,
    X_POLICY: tl.constexpr,
    W_POLICY: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0, eviction_policy=X_POLICY).to(
        tl.float32
    )
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy=W_POLICY).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0, eviction_policy=W_POLICY).to(tl.float32)
    tl.store(
        y_ptr + row * stride + cols,
        (xc * rstd * w + b).to(y_ptr.dtype.element_ty),
        mask=mask,
        eviction_policy=X_POLICY,
    )
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def _rms_norm(
    x_ptr,
    w_ptr,
    y_ptr,
    stride,
    n_cols,
    eps,
    BLOCK_N: tl.constexpr,
    X_POLICY: tl.constexpr,
    W_POLICY: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0, eviction_policy=X_POLICY).to(
        tl.float32
    )
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy=W_POLICY).to(tl.float32)
    tl.store(
        y_ptr + row * stride + cols,
        (x * rstd * w).to(y_ptr.dtype.element_ty),
        mask=mask,
        eviction_policy=X_POLICY,
    )


def main() -> int:
    m, n = 4096, 8192
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    mean = torch.empty(m, device="cuda")
    rstd = torch.empty(m, device="cuda")
    nbytes = 2 * m * n * 2
    for x_policy, w_policy in (
        ("", ""),
        ("evict_first", ""),
        ("", "evict_last"),
        ("evict_first", "evict_last"),
    ):
        for warps in (8, 16):
            for name, launch in (
                (
                    "layer_norm",
                    lambda: _layer_norm[(m,)](
                        x,
                        w,
                        b,
                        y,
                        mean,
                        rstd,
                        x.stride(0),
                        n,
                        1e-5,
                        BLOCK_N=n,
                        X_POLICY=x_policy,
                        W_POLICY=w_policy,
                        num_warps=warps,
                    ),
                ),
                (
                    "rms_norm",
                    lambda: _rms_norm[(m,)](
                        x,
                        w,
                        y,
                        x.stride(0),
                        n,
                        1e-6,
                        BLOCK_N=n,
                        X_POLICY=x_policy,
                        W_POLICY=w_policy,
                        num_warps=warps,
                    ),
                ),
            ):
                times = [do_bench(launch, return_mode="median") * 1e3 for _ in range(3)]
                best = min(times)
                print(
                    f"{name:<10} x={x_policy or '-':<11} w={w_policy or '-':<10} "
                    f"warps={warps:<2} {' '.join(f'{t:6.2f}' for t in times)} µs  "
                    f"{nbytes / best / 1e3:5.0f} GB/s",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
