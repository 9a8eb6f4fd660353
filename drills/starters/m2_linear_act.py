"""M2: y = gelu_tanh(x @ w.T + b), the bias and GELU fused after the K loop.

The matmul is M1's, with w in nn.Linear's layout: w is [N, K], so the tile of w.T you multiply
is read through w's strides (element w.T[k, n] is w[n, k]). Once the K loop is done, the fp32
accumulator holds x @ w.T for the tile: add the bias (one value per output column), apply GELU,
and only then round to x's dtype and store.

    gelu_tanh(v) = 0.5 * v * (1 + tanh(sqrt(2/pi) * (v + 0.044715 * v**3)))

Run the tests with `tutor check m2` (add --cpu to use Triton's interpreter).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _linear_gelu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_xk,
    stride_wn,
    stride_wk,
    stride_ym,
    stride_yn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    # TODO: the tile (pid_m, pid_n), offs_m, offs_n, offs_k and the edge masks, as in M1.
    # TODO: x_ptrs as in M1; w_ptrs: a BLOCK_K x BLOCK_N tile of w.T, whose element (k, n)
    #       is w[n, k]: which stride goes with offs_k, which with offs_n?
    # TODO: the K loop of M1: masked loads, acc = tl.dot(x, w, acc, ...), pointers advanced.
    #       Nothing else goes in the loop: acc is only x @ w.T once every K block is in.
    # TODO: after the loop: load the bias for this tile's columns (offs_n) as fp32 and add it
    #       along the right axis of acc.
    # TODO: GELU on the fp32 sum; tanh(z) = 2 * sigmoid(2z) - 1 (no tanh in the interpreter).
    # TODO: store, converted to y's dtype, with the M and N masks.
    pass


def linear_gelu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = gelu_tanh(x @ w.T + b), as F.gelu(F.linear(x, w, b), approximate="tanh").

        v[m, n] = sum_k x[m, k] * w[n, k] + b[n]
        y[m, n] = 0.5 * v * (1 + tanh(sqrt(2/pi) * (v + 0.044715 * v**3)))

    x: [M, K]; w: [N, K] (nn.Linear's weight: one row per output feature); b: [N]. All float32,
    or all bfloat16 / float16; any strides. Returns a new contiguous [M, N] tensor in x's dtype.
    The sums and the epilogue run in fp32; fp32 inputs are multiplied in full fp32 ("ieee").
    """
    # TODO: check the shapes (x [M, K], w [N, K], b [N]), dtypes and devices.
    # TODO: y = torch.empty((M, N), dtype=x.dtype, device=x.device); block sizes, num_warps,
    #       num_stages and INPUT_PRECISION as in M1.
    # TODO: a 1-D grid of cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs; pass w's strides in
    #       the order the kernel names them (stride_wn = w.stride(0), stride_wk = w.stride(1)).
    raise NotImplementedError("TODO: write linear_gelu and its kernel")
