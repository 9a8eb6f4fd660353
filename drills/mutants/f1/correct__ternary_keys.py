"""f1, correct: FlashInfer's shape of search, two pivots per pass (a ternary search on the keys).

Each pass over the row measures the count and mass at two pivots, a third and two thirds of the
way up [lo, hi), and keeps the third of the range that holds t: about log3 of the key range in
passes (9 for bf16, 19 for float32) instead of log2 (14, 30), for twice the compares per value.
The loop runs until one key is left. Separate kernels for top-p and top-k, one shared pass.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _two_pivots(row_ptr, pivot_1, pivot_2, n_cols, BLOCK: tl.constexpr):
    """(count, mass) of the values >= pivot_1 and of those >= pivot_2."""
    lanes = tl.arange(0, BLOCK)
    count_1 = tl.zeros((BLOCK,), tl.int32)
    count_2 = tl.zeros((BLOCK,), tl.int32)
    mass_1 = tl.zeros((BLOCK,), tl.float32)
    mass_2 = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        inside = start + lanes < n_cols
        x = tl.load(row_ptr + start + lanes, mask=inside, other=0.0).to(tl.float32)
        over_1 = inside & (x >= pivot_1)
        over_2 = inside & (x >= pivot_2)
        count_1 += over_1.to(tl.int32)
        count_2 += over_2.to(tl.int32)
        mass_1 += tl.where(over_1, x, 0.0)
        mass_2 += tl.where(over_2, x, 0.0)
    return tl.sum(count_1, 0), tl.sum(mass_1, 0), tl.sum(count_2, 0), tl.sum(mass_2, 0)


@triton.jit
def _as_float(key, SHIFT: tl.constexpr):
    return (key << SHIFT).to(tl.float32, bitcast=True)


@triton.jit
def _write(row_ptr, out_ptr, threshold, mass, n_cols, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        inside = start + lanes < n_cols
        x = tl.load(row_ptr + start + lanes, mask=inside, other=0.0).to(tl.float32)
        out = tl.where(x >= threshold, x / mass, 0.0)
        tl.store(out_ptr + start + lanes, out.to(out_ptr.dtype.element_ty), mask=inside)


@triton.jit
def _top_k_kernel(
    x_ptr, y_ptr, k, x_stride, y_stride, n_cols, SHIFT: tl.constexpr, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * x_stride
    y_ptr += row * y_stride
    _, _, _, mass = _two_pivots(x_ptr, 0.0, 0.0, n_cols, BLOCK)  # key 0 keeps everything
    lo = tl.zeros((), tl.int32)
    hi = tl.full((), 1 << (30 - SHIFT), tl.int32)
    while hi - lo > 1:
        third = (hi - lo + 2) // 3
        key_1 = lo + third
        key_2 = tl.minimum(lo + 2 * third, hi - 1)
        count_1, mass_1, count_2, mass_2 = _two_pivots(
            x_ptr, _as_float(key_1, SHIFT), _as_float(key_2, SHIFT), n_cols, BLOCK
        )
        ok_1 = count_1 >= k
        ok_2 = count_2 >= k
        mass = tl.where(ok_2, mass_2, tl.where(ok_1, mass_1, mass))
        hi = tl.where(ok_2, hi, tl.where(ok_1, key_2, key_1))
        lo = tl.where(ok_2, key_2, tl.where(ok_1, key_1, lo))
    _write(x_ptr, y_ptr, _as_float(lo, SHIFT), mass, n_cols, BLOCK)


@triton.jit
def _top_p_kernel(
    x_ptr, y_ptr, p_ptr, x_stride, y_stride, n_cols, SHIFT: tl.constexpr, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * x_stride
    y_ptr += row * y_stride
    p = tl.load(p_ptr + row)
    _, _, _, mass = _two_pivots(x_ptr, 0.0, 0.0, n_cols, BLOCK)
    lo = tl.zeros((), tl.int32)
    hi = tl.full((), 1 << (30 - SHIFT), tl.int32)
    while hi - lo > 1:
        third = (hi - lo + 2) // 3
        key_1 = lo + third
        key_2 = tl.minimum(lo + 2 * third, hi - 1)
        _, mass_1, _, mass_2 = _two_pivots(
            x_ptr, _as_float(key_1, SHIFT), _as_float(key_2, SHIFT), n_cols, BLOCK
        )
        ok_1 = mass_1 >= p
        ok_2 = mass_2 >= p
        mass = tl.where(ok_2, mass_2, tl.where(ok_1, mass_1, mass))
        hi = tl.where(ok_2, hi, tl.where(ok_1, key_2, key_1))
        lo = tl.where(ok_2, key_2, tl.where(ok_1, key_1, lo))
    _write(x_ptr, y_ptr, _as_float(lo, SHIFT), mass, n_cols, BLOCK)


SHIFTS = {torch.float32: 0, torch.bfloat16: 16, torch.float16: 13}


def _setup(probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    assert probs.dim() == 2 and probs.dtype in SHIFTS
    if probs.stride(1) != 1:
        probs = probs.contiguous()
    out = torch.empty(probs.shape, dtype=probs.dtype, device=probs.device)
    block = min(triton.next_power_of_2(probs.shape[1]), 4096)
    return probs, out, SHIFTS[probs.dtype], block


def top_k_renorm(probs: torch.Tensor, k: int) -> torch.Tensor:
    probs, out, shift, block = _setup(probs)
    _top_k_kernel[(probs.shape[0],)](
        probs, out, k, probs.stride(0), out.stride(0), probs.shape[1], SHIFT=shift, BLOCK=block
    )
    return out


def top_p_renorm(probs: torch.Tensor, p) -> torch.Tensor:
    probs, out, shift, block = _setup(probs)
    p_rows = torch.as_tensor(p, dtype=torch.float32, device=probs.device)
    p_rows = p_rows.expand(probs.shape[0]).contiguous()
    _top_p_kernel[(probs.shape[0],)](
        probs, out, p_rows, probs.stride(0), out.stride(0), probs.shape[1], SHIFT=shift, BLOCK=block
    )
    return out
