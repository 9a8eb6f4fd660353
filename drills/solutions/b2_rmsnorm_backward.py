"""B2 reference: RMSNorm backward, dx row by row and dw as a two-stage reduction across rows.

The forward was y = x * rstd * w with rstd = 1 / sqrt(mean(x^2) + eps), one rstd per row. Its
backward needs, for each row, dx (a row reduction, like the forward) and, for the weight, dw
summed over ALL rows: a reduction across programs. Each program takes a contiguous group of
rows, accumulates its share of dw in fp32 registers, and writes it to its own row of a
[n_programs, N] buffer; torch.sum over that buffer (a second, tiny reduction) gives dw. No two
programs ever write the same address, so no lock and no atomics are needed.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# One row must fit in one program's registers; longer rows need a loop over column blocks.
MAX_BLOCK_N = 65536
# Programs per SM on the GPU: one, of up to 32 warps, that loads row r + 1 while it reduces row
# r (the prefetch in the kernel). It also keeps the partial-dw buffer at 132 * N fp32 values on
# an H200. Measured there (M = 4096, N = 8192, bf16; % of copy bandwidth): 2 programs of 8 warps
# without the prefetch 58.8%, 1 program of 32 warps with it 79.4%.
PROGRAMS_PER_SM = 1
# Rows of up to SHORT_ROW columns take two programs per SM: one short row's dy and x (2 x 4 KB at
# 2048 bf16 columns) are too few bytes in flight to keep the SM's memory pipe busy. On an H200
# (M = 4096, N = 2048, bf16, CUDA graph): 1 program 31.9 us, 2 programs 26.2, 4 programs 30.9;
# torch.compile 29.3. At N = 8192 a second program costs time (60.2 -> 66.3 us).
SHORT_ROW = 2048
SHORT_ROW_PROGRAMS_PER_SM = 2
# Up to 32 warps (1024 threads, the most one program can have) for one row of N columns.
MAX_NUM_WARPS = 32
# On the CPU interpreter programs run one after another; a few suffice to exercise the pattern.
CPU_PROGRAMS = 4


@triton.jit
def _rms_norm_bwd_kernel(
    dy_ptr,
    x_ptr,
    w_ptr,
    rstd_ptr,
    dx_ptr,
    dw_partial_ptr,
    dy_row_stride,
    x_row_stride,
    dx_row_stride,
    n_rows,
    n_cols,
    rows_per_program,
    BLOCK_N: tl.constexpr,
):
    program = tl.program_id(0).to(tl.int64)
    row_start = program * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    offsets = tl.arange(0, BLOCK_N)
    mask = offsets < n_cols
    w = tl.load(w_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    # This program's share of dw, in fp32, kept in registers across its rows.
    dw_acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    # Prefetch: the first row is loaded before the loop (clamped to a real row: a program whose
    # group is empty loads the last row and never uses it).
    first_row = tl.minimum(row_start, n_rows - 1)
    dy_next = tl.load(dy_ptr + first_row * dy_row_stride + offsets, mask=mask, other=0.0)
    x_next = tl.load(x_ptr + first_row * x_row_stride + offsets, mask=mask, other=0.0)
    for row_idx in range(row_start, row_end):
        # This row's dy and x, loaded one iteration ago.
        dy = dy_next.to(tl.float32)
        x = x_next
        # Issue the next row's loads now: they are in flight while this row is reduced and
        # stored. With one program per SM nothing else would hide the DRAM latency. The last
        # row loads itself again (always in bounds, never used).
        next_row = tl.minimum(row_idx + 1, row_end - 1)
        dy_next = tl.load(dy_ptr + next_row * dy_row_stride + offsets, mask=mask, other=0.0)
        x_next = tl.load(x_ptr + next_row * x_row_stride + offsets, mask=mask, other=0.0)
        # rstd as the forward computed it: never recomputed (the eps is not known here).
        rstd = tl.load(rstd_ptr + row_idx)
        x_hat = x.to(tl.float32) * rstd
        wdy = dy * w
        # The mean term: y depends on every x of the row through rstd.
        c = tl.sum(wdy * x_hat, axis=0) / n_cols
        dx = (wdy - x_hat * c) * rstd
        tl.store(
            dx_ptr + row_idx * dx_row_stride + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask
        )
        dw_acc += dy * x_hat
    # Stage one: this program's partial dw to its own row; nobody else writes there.
    tl.store(dw_partial_ptr + program * n_cols + offsets, dw_acc, mask=mask)


def rms_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of y = x * rstd * weight (RMSNorm over the last dimension) for x and weight.

        x_hat = x * rstd                                   (rstd [M] as given by the forward)
        dx    = rstd * (dy * w - x_hat * mean(dy * w * x_hat))   per row, in x's dtype
        dw    = sum over rows of dy * x_hat                 in fp32, returned in weight's dtype

    dy, x: [M, N] float32 / bfloat16 (rows may be strided); weight: [N]; rstd: [M] float32,
    1 / sqrt(mean(x^2) + eps) from the forward. Use rstd as given: the eps is not passed, and
    recomputing it from x (with another eps, or from the rounded x) gives another gradient.
    """
    if x.dim() != 2 or dy.shape != x.shape:
        raise ValueError(
            f"x and dy must be the same [M, N], got {tuple(x.shape)}, {tuple(dy.shape)}"
        )
    n_rows, n_cols = x.shape
    if weight.shape != (n_cols,) or rstd.shape != (n_rows,):
        raise ValueError(
            f"weight must be ({n_cols},) and rstd ({n_rows},), got "
            f"{tuple(weight.shape)} and {tuple(rstd.shape)}"
        )
    x = x if x.stride(-1) == 1 else x.contiguous()
    dy = dy if dy.stride(-1) == 1 else dy.contiguous()
    block_n = triton.next_power_of_2(n_cols)
    if block_n > MAX_BLOCK_N:
        raise ValueError(f"rows of {n_cols} elements do not fit in one program (max {MAX_BLOCK_N})")
    n_programs = min(_programs(x.device, block_n), n_rows)
    rows_per_program = triton.cdiv(n_rows, n_programs)
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dw_partial = torch.empty((n_programs, n_cols), dtype=torch.float32, device=x.device)
    _rms_norm_bwd_kernel[(n_programs,)](
        dy,
        x,
        weight.contiguous(),
        rstd.contiguous(),
        dx,
        dw_partial,
        dy.stride(0),
        x.stride(0),
        dx.stride(0),
        n_rows,
        n_cols,
        rows_per_program,
        BLOCK_N=block_n,
        num_warps=_num_warps(block_n),
    )
    # Stage two: n_programs rows of fp32 partials summed (torch.sum: a small reduction).
    dw = dw_partial.sum(dim=0).to(weight.dtype)
    return dx, dw


def _programs(device: torch.device, block_n: int) -> int:
    """How many programs share the rows: a few per SM on the GPU, CPU_PROGRAMS on the CPU."""
    if device.type == "cuda":
        sms = torch.cuda.get_device_properties(device).multi_processor_count
        return _programs_per_sm(block_n) * sms
    return CPU_PROGRAMS


def _programs_per_sm(block_n: int) -> int:
    """Two for short rows, one otherwise (see SHORT_ROW)."""
    return SHORT_ROW_PROGRAMS_PER_SM if block_n <= SHORT_ROW else PROGRAMS_PER_SM


def _num_warps(block_n: int) -> int:
    """About 256 elements per warp (8 per thread: one 16-byte load of bf16), 1 to 32 warps.

    With one program per SM, its warps are all the SM has to keep loads in flight: 32 warps at
    N = 8192 (16 warps measured 78.2% of copy bandwidth on an H200, 32 warps 79.4%).
    """
    return min(max(block_n // 256, 1), MAX_NUM_WARPS)
