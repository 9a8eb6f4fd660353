"""A correct f6 written as a grid-stride loop over rows (four programs per SM, each looping),
not one row per program. The rest is the reference: per-token symmetric int8 quantization.

Each row t of x gets its own scale, scale[t] = amax[t] / 127 with amax[t] = max |x[t, :]|, and
q[t, :] = round(x[t, :] / scale[t]) clamped to [-127, 127]. LLM inference does this to the
activations entering an int8 (or fp8) matmul: one scale per token, because token rows differ
in size by orders of magnitude. A row is loaded once into registers, its amax reduced in fp32,
and the row written back as int8 with its fp32 scale.

Why int8 and not float8_e4m3fn: Triton 3.9's interpreter converts fp32 to float8e4nv wrongly
(ties round away from zero instead of to even, a value that rounds up into the next binade
lands one binade low: 31.6 becomes 16, and values past 448 become NaN or 256), so the CPU
tests could not check fp8 output. int8 converts faithfully on both backends.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

QMAX = 127.0  # int8 is symmetric here: -127..127, so -128 is never used
AMAX_MIN = 1e-10  # a row's amax is raised to at least this: a zero row gets a tiny scale, q = 0
# One row must fit in one program's registers; longer rows need a loop over column blocks.
MAX_BLOCK_H = 65536


@triton.jit
def _quant_per_token_kernel(
    x_ptr,
    q_ptr,
    scale_ptr,
    x_row_stride,
    q_row_stride,
    n_rows,
    n_cols,
    amax_ub,
    QMAX: tl.constexpr,
    AMAX_MIN: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    # A grid-stride loop: program p quantizes rows p, p + G, p + 2G, ... (G programs).
    offsets = tl.arange(0, BLOCK_H)
    mask = offsets < n_cols
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        row_idx = row.to(tl.int64)
        x = tl.load(x_ptr + row_idx * x_row_stride + offsets, mask=mask, other=0.0)
        x = x.to(tl.float32)

        # The largest magnitude, not the largest value: padded lanes hold 0 and cannot win.
        amax = tl.max(tl.abs(x), axis=0)
        # An optional cap on amax (an outlier clip); rows above it saturate, hence the clamp below.
        amax = tl.minimum(amax, amax_ub)
        # The floor keeps a zero row's scale positive: 0 / 0 would be NaN.
        amax = tl.maximum(amax, AMAX_MIN)
        scale = amax / QMAX

        v = x / scale
        v = tl.minimum(tl.maximum(v, -QMAX), QMAX)
        # float -> int conversion truncates toward zero on both backends: adding +-0.5 first rounds
        # to nearest, ties away from zero (as libdevice's round, which the interpreter lacks).
        q = (v + tl.where(v >= 0, 0.5, -0.5)).to(tl.int8)
        tl.store(q_ptr + row_idx * q_row_stride + offsets, q, mask=mask)
        tl.store(scale_ptr + row_idx, scale)


def quant_per_token(
    x: torch.Tensor, amax_ub: float | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 quantization of each row of `x`, with one float32 scale per row.

        amax[t]  = max(min(max_h |x[t, h]|, amax_ub), 1e-10)
        scale[t] = amax[t] / 127                                   (float32)
        q[t, h]  = round(clamp(x[t, h] / scale[t], -127, 127))     (int8, ties away from 0)

    x: [T, H] float32 / bfloat16 / float16, rows may be strided (unit column stride).
    amax_ub: an optional upper bound on amax (vLLM's scale_ub): entries past it saturate.
    Returns q (int8, [T, H], contiguous) and scale (float32, [T]); x ~ q * scale[:, None].
    """
    if x.dim() != 2:
        raise ValueError(f"x must be [T, H], got shape {tuple(x.shape)}")
    if x.stride(-1) != 1:
        x = x.contiguous()
    n_rows, n_cols = x.shape
    block_h = triton.next_power_of_2(n_cols)
    if block_h > MAX_BLOCK_H:
        raise ValueError(f"rows of {n_cols} elements do not fit in one program (max {MAX_BLOCK_H})")
    q = torch.empty((n_rows, n_cols), dtype=torch.int8, device=x.device)
    scale = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    _quant_per_token_kernel[(min(n_rows, _programs(x.device)),)](
        x,
        q,
        scale,
        x.stride(0),
        q.stride(0),
        n_rows,
        n_cols,
        float("inf") if amax_ub is None else float(amax_ub),
        QMAX=QMAX,
        AMAX_MIN=AMAX_MIN,
        BLOCK_H=block_h,
        num_warps=_num_warps(block_h),
    )
    return q, scale


def _programs(device: torch.device) -> int:
    """Four programs per SM on a GPU (each loops over its rows); a few on the CPU."""
    if device.type == "cuda":
        return 4 * torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def _num_warps(block_h: int) -> int:
    """About 256 elements per warp (8 per thread: one 16-byte load of bf16), 1 to 8 warps."""
    return min(max(block_h // 256, 1), 8)
