"""T3 reference: LayerNorm and RMSNorm forward, one row per Triton program.

Both normalise over the last dimension; every leading dimension is folded into rows. A row is
loaded once into registers (BLOCK_N lanes, the power of two at or above N), its statistics are
reduced in fp32, and the normalised row is written back in the input's dtype. LayerNorm also
returns the per-row mean and rstd in float32, which a backward pass would reuse.

The row length N and the row strides are compile-time constants (`tl.constexpr`), as
torch.compile makes them: the mask and the divisions by N are fixed when the kernel is
compiled, and a stride such as 1000 bf16 values (2000 bytes, a multiple of 16) proves every
row starts 16-byte aligned, so rows load in 16-byte pieces. On an H200 (4096 x 1000 bf16, CUDA
graph, inputs rotated past the L2) layer_norm took 7.08 us with runtime strides and 5.73 us
with constant ones (torch.compile 5.69); rms_norm 6.22 and 5.43 (compile 5.55). The price is
one compile per row length and stride, which a model with one hidden size pays once.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# One row must fit in one program's registers; longer rows need a loop over column blocks.
MAX_BLOCK_N = 65536


@triton.jit
def _layer_norm_fwd_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    x_row_stride: tl.constexpr,
    y_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps,
    BLOCK_N: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK_N)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row_idx * x_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)

    # Padded lanes hold 0, so they add nothing to the sum; divide by the true length.
    mean = tl.sum(x, axis=0) / n_cols
    # A padded lane's x - mean is -mean, not 0: zero it before it is squared.
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)

    w = tl.load(w_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + row_idx * y_row_stride + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row_idx, mean)
    tl.store(rstd_ptr + row_idx, rstd)


@triton.jit
def _rms_norm_fwd_kernel(
    x_ptr,
    w_ptr,
    y_ptr,
    x_row_stride: tl.constexpr,
    y_row_stride: tl.constexpr,
    n_cols: tl.constexpr,
    eps,
    BLOCK_N: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK_N)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row_idx * x_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)

    # No mean is subtracted, so padded lanes stay 0 when squared: no tl.where needed.
    mean_sq = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(mean_sq + eps)

    w = tl.load(w_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(y_ptr + row_idx * y_row_stride + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """LayerNorm over the last dimension of `x`, with the statistics a backward pass needs.

        mean = sum(x) / N
        var  = sum((x - mean)^2) / N          (biased, as torch.nn.functional.layer_norm)
        rstd = 1 / sqrt(var + eps)
        y    = (x - mean) * rstd * weight + bias

    x: [..., N] float32 / bfloat16 / float16; weight, bias: [N].
    Returns y (x's shape and dtype) and mean, rstd (float32, shape [M], M = x.numel() // N).
    """
    n_cols = _check(x, weight, "weight")
    _check(x, bias, "bias")
    x2d = _rows(x, n_cols)
    n_rows = x2d.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    mean = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    block_n = _block_n(n_cols)
    _layer_norm_fwd_kernel[(n_rows,)](
        x2d,
        weight.contiguous(),
        bias.contiguous(),
        y,
        mean,
        rstd,
        x2d.stride(0),
        y.stride(0),
        n_cols,
        eps,
        BLOCK_N=block_n,
        num_warps=_num_warps(block_n),
    )
    return y.view(x.shape), mean, rstd


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of `x`.

        rstd = 1 / sqrt(sum(x^2) / N + eps)
        y    = x * rstd * weight

    x: [..., N] float32 / bfloat16 / float16; weight: [N]. Returns y with x's shape and dtype.
    """
    n_cols = _check(x, weight, "weight")
    x2d = _rows(x, n_cols)
    n_rows = x2d.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block_n = _block_n(n_cols)
    _rms_norm_fwd_kernel[(n_rows,)](
        x2d,
        weight.contiguous(),
        y,
        x2d.stride(0),
        y.stride(0),
        n_cols,
        eps,
        BLOCK_N=block_n,
        num_warps=_num_warps(block_n),
    )
    return y.view(x.shape)


def _check(x: torch.Tensor, param: torch.Tensor, name: str) -> int:
    """N, after checking that `param` is a vector of N values on x's device."""
    n_cols = x.shape[-1]
    if param.shape != (n_cols,):
        raise ValueError(f"{name} has shape {tuple(param.shape)}, expected ({n_cols},)")
    if param.device != x.device:
        raise ValueError(f"{name} is on {param.device}, x on {x.device}")
    return n_cols


def _rows(x: torch.Tensor, n_cols: int) -> torch.Tensor:
    """x as [M, N] with unit column stride; rows may sit further apart than N (a sliced view).

    reshape returns a view whenever the leading dimensions can be merged, so nothing is copied
    in the common case; the kernel only reads x, so a copy would merely cost time.
    """
    x2d = x.reshape(-1, n_cols)
    if x2d.stride(-1) != 1:
        x2d = x2d.contiguous()
    return x2d


def _block_n(n_cols: int) -> int:
    block_n = triton.next_power_of_2(n_cols)
    if block_n > MAX_BLOCK_N:
        raise ValueError(f"rows of {n_cols} elements do not fit in one program (max {MAX_BLOCK_N})")
    return block_n


def _num_warps(block_n: int) -> int:
    """One warp for rows up to 1024, two up to 2048, then 8.

    A short row is little work and two reductions in a row: in one warp they are shuffles,
    with no wait on shared memory (on an H200, a one-row-per-program layer_norm of 4096 x 1000
    in a CUDA graph: 9.1 us with 1 warp, 10.6 with 4). Long rows need more warps so each thread
    keeps few values in registers; past 8 the cross-warp reductions cost more than they save
    (4096 x 8192 LayerNorm: about 40 us with 8 warps, 42-43 us with 16).
    """
    if block_n <= 1024:
        return 1
    if block_n <= 2048:
        return 2
    return 8
