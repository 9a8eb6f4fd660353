"""M2 reference: y = gelu_tanh(x @ w.T + b), the bias and GELU fused after the K loop.

The matmul is M1's, with w in nn.Linear's layout: w is [N, K], so the tile of w.T that a
program multiplies is read through w's strides (element w.T[k, n] is w[n, k]). Once the K loop
is done, the fp32 accumulator holds x @ w.T for the tile; the bias (one value per output
column n) is added to it, GELU is applied, and only then is the tile rounded to x's dtype and
stored. The epilogue costs no extra pass over memory: that is the point of fusing it.

16-bit inputs whose rows lie in memory order, 16-byte aligned (a model's activations and
weights), take M1's fast path: `_linear_gelu_tma_kernel` loads the tiles of x and of w through
tensor descriptors (Hopper's TMA), w's as [BLOCK_N, BLOCK_K] tiles of its own rows transposed
on chip. Like M1's, it is persistent (one program an SM walking tiles pid, pid + programs, ...),
its tile and K loops are flattened into one pipeline, and each tile takes its epilogue and is
stored in two halves, so that 4 stages of inputs fit in shared memory. At 4096^3 bf16 on an H100
(the lab's probe_matmul_persistent, CUDA graphs in turn): 210 us, where the same kernel one
program a tile, stored whole on 3 stages, took 218, cuBLAS followed by torch's GELU 227 and
torch.compile 236. Every other input takes the pointer kernel.

    gelu_tanh(v) = 0.5 * v * (1 + tanh(sqrt(2/pi) * (v + 0.044715 * v**3)))
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

FEW_ROWS = 64  # up to this many rows of x, tiles of 16 rows (see M1)


@triton.jit
def _tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The (tile row, tile column) of y that program `pid` computes, in M1's grouped order."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may be shorter
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _bias_gelu(acc, b_ptr, offs_n, mask_n):
    """The epilogue, on the fp32 tile: gelu_tanh(acc + b), b one value per column."""
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    v = acc + bias[None, :]
    # 0.5 * v * (1 + tanh(z)) with tanh(z) = 2 * sigmoid(2z) - 1 is v * sigmoid(2z).
    z = 0.7978845608028654 * (v + 0.044715 * v * v * v)  # sqrt(2/pi) * (v + 0.044715 v^3)
    return v * tl.sigmoid(2.0 * z)


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
    # Grouped ordering, as in M1: GROUP_M tile rows share their columns of w in L2.
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    # A BLOCK_K x BLOCK_N tile of w.T: row k, column n is w[n, k].
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc = tl.dot(x, w, acc, input_precision=INPUT_PRECISION)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    # The epilogue, once, on the finished fp32 sums: bias per column, then GELU.
    y = _bias_gelu(acc, b_ptr, offs_n, mask_n)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def _linear_gelu_tma_kernel(
    x_desc,
    w_desc,
    b_ptr,
    y_desc,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """The same tiles through tensor descriptors, by a few programs that each walk many tiles
    (see the module docstring and M1's)."""
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    # flatten=True pipelines this loop and the K loop as one: the next tile's first loads are
    # in flight while this tile's epilogue runs and its halves are stored.
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True):
        pid_m, pid_n = _tile_of(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            x = x_desc.load([pid_m * BLOCK_M, k * BLOCK_K])  # past the edges: 0
            w = w_desc.load([pid_n * BLOCK_N, k * BLOCK_K])  # BLOCK_N rows of w: w.T's columns
            acc = tl.dot(x, tl.trans(w), acc)
        # Two halves of BLOCK_N / 2 columns, each with its own bias: a store stages its values
        # in shared memory, and half a tile's buffer leaves room for a fourth stage of inputs.
        left, right = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N // 2)
        y = _bias_gelu(left, b_ptr, offs_n, offs_n < N)
        y_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], y.to(y_desc.dtype))  # inside y only
        offs_n += BLOCK_N // 2
        y = _bias_gelu(right, b_ptr, offs_n, offs_n < N)
        y_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], y.to(y_desc.dtype))


def _sm_count(t: torch.Tensor) -> int:
    """The SMs of t's GPU: the descriptor kernel's programs. On the CPU interpreter, 2, so the
    loop over tiles still loops."""
    if t.is_cuda:
        return torch.cuda.get_device_properties(t.device).multi_processor_count
    return 2


def _rows_for_descriptors(*tensors: torch.Tensor) -> bool:
    """A tensor descriptor (TMA) needs rows in memory order, each row and the base 16-byte
    aligned."""
    return all(
        t.stride(1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0 and t.data_ptr() % 16 == 0
        for t in tensors
    )


def linear_gelu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = gelu_tanh(x @ w.T + b), as F.gelu(F.linear(x, w, b), approximate="tanh").

        v[m, n] = sum_k x[m, k] * w[n, k] + b[n]
        y[m, n] = 0.5 * v * (1 + tanh(sqrt(2/pi) * (v + 0.044715 * v**3)))

    x: [M, K]; w: [N, K] (nn.Linear's weight: one row per output feature); b: [N]. All float32,
    or all bfloat16 / float16; any strides. Returns a new contiguous [M, N] tensor in x's dtype.
    The sums and the epilogue run in fp32; fp32 inputs are multiplied in full fp32 ("ieee").
    """
    if x.dim() != 2 or w.dim() != 2 or x.shape[1] != w.shape[1]:
        raise ValueError(
            f"linear_gelu needs x [M, K] and w [N, K], got {tuple(x.shape)} and {tuple(w.shape)}"
        )
    if b.shape != (w.shape[0],):
        raise ValueError(f"b has shape {tuple(b.shape)}, expected ({w.shape[0]},)")
    if not (x.dtype == w.dtype == b.dtype) or not (x.device == w.device == b.device):
        raise ValueError("x, w and b must share a dtype and a device")
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if x.dtype != torch.float32 and m > FEW_ROWS and _rows_for_descriptors(x, w, y):
        block_m, block_n, block_k = 128, 256, 64  # M1's descriptor config
        tiles = triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
        _linear_gelu_tma_kernel[(min(tiles, _sm_count(x)),)](
            TensorDescriptor.from_tensor(x, [block_m, block_k]),
            TensorDescriptor.from_tensor(w, [block_n, block_k]),
            b.contiguous(),
            TensorDescriptor.from_tensor(y, [block_m, block_n // 2]),  # stored by halves
            m,
            n,
            k,
            BLOCK_M=block_m,
            BLOCK_N=block_n,
            BLOCK_K=block_k,
            GROUP_M=8,
            num_warps=8,
            num_stages=4,  # 4 x 48 KiB of inputs and a 32 KiB half tile (module docstring)
        )
        return y
    if x.dtype == torch.float32:
        block_m, block_n, block_k, num_warps, precision = 128, 128, 32, 8, "ieee"
        num_stages = 3
    elif m <= FEW_ROWS:
        # A few rows (a decode step's tokens): 16-row tiles and narrow ones, as in M1.
        block_m, block_n, block_k, num_warps, precision = 16, 32, 512, 4, "tf32"
        num_stages = 3
    else:
        block_m, block_n, block_k, num_warps, precision = 128, 256, 64, 8, "tf32"
        num_stages = 4  # as in M1: 4 x 48 KiB of shared memory
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _linear_gelu_kernel[grid](
        x,
        w,
        b.contiguous(),
        y,
        m,
        n,
        k,
        x.stride(0),
        x.stride(1),
        w.stride(0),
        w.stride(1),
        y.stride(0),
        y.stride(1),
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        BLOCK_K=block_k,
        GROUP_M=8,
        INPUT_PRECISION=precision,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return y
