"""M1: a blocked matmul, c = a @ b, with tl.dot on tiles and an fp32 accumulator.

Each program computes one BLOCK_M x BLOCK_N tile of c. It walks along K in steps of BLOCK_K,
loads a BLOCK_M x BLOCK_K tile of a and a BLOCK_K x BLOCK_N tile of b, and adds their product
(tl.dot) into a float32 accumulator. The last K block is partial when K is not a multiple of
BLOCK_K, and the tiles on the bottom and right edges stick out of c: masks cover both. Any
strides work (transposed views, slices): build every address from the tensor's own strides.

Run the tests with `tutor check m1` (add --cpu to use Triton's interpreter).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    # TODO: which tile is this program's? pid = tl.program_id(0); turn it into (pid_m, pid_n)
    #       in groups of GROUP_M tile rows (the lesson's "Going faster"), or start with
    #       pid_m = pid // num_pid_n, pid_n = pid % num_pid_n.
    # TODO: offs_m, offs_n: the rows and columns of c this tile covers; offs_k = 0..BLOCK_K-1.
    # TODO: a_ptrs: a BLOCK_M x BLOCK_K grid of addresses (rows * stride_am + k * stride_ak),
    #       b_ptrs: BLOCK_K x BLOCK_N (k * stride_bk + columns * stride_bn).
    # TODO: the accumulator: tl.zeros((BLOCK_M, BLOCK_N), ...) in which dtype, and why?
    # TODO: loop over the K blocks (tl.cdiv(K, BLOCK_K) of them): load both tiles with masks
    #       for the rows/columns past M or N and the lanes past K (other=0.0), then
    #       acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION).
    # TODO: move both pointer grids one K block on: how far is that in memory?
    # TODO: store acc, converted to c's dtype (c_ptr.dtype.element_ty), with a mask for the
    #       rows past M and the columns past N.
    pass


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a @ b, accumulated in float32.

        c[m, n] = sum_k a[m, k] * b[k, n]

    a: [M, K], b: [K, N], both float32 or both bfloat16 / float16, any strides (transposed
    views and slices are read in place). Returns a new contiguous [M, N] tensor in a's dtype.
    float32 inputs are multiplied in full fp32 (input_precision="ieee"), as torch.matmul does
    by default; TF32 would be faster on the GPU but only good to about 1e-3.
    """
    # TODO: check the shapes (a [M, K], b [K, N]) and that dtypes and devices match.
    # TODO: c = torch.empty((M, N), dtype=a.dtype, device=a.device).
    # TODO: pick BLOCK_M, BLOCK_N, BLOCK_K (powers of two, at least 16 for tl.dot), num_warps
    #       and num_stages; INPUT_PRECISION "ieee" for fp32 inputs.
    # TODO: grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),); launch the kernel
    #       with all six strides (a.stride(0), a.stride(1), ...) and return c.
    raise NotImplementedError("TODO: write matmul and its kernel")
