"""M1 reference: a blocked matmul, c = a @ b, with tl.dot on tiles and an fp32 accumulator.

Each program computes one BLOCK_M x BLOCK_N tile of c. It walks along K in steps of BLOCK_K,
loads a BLOCK_M x BLOCK_K tile of a and a BLOCK_K x BLOCK_N tile of b, and adds their product
(tl.dot) into a float32 accumulator. The last K block is partial when K is not a multiple of
BLOCK_K, and the tiles on the bottom and right edges stick out of c: masks cover both. Any
strides work (transposed views, slices): every address is built from the tensor's own strides.
Programs are numbered in groups of GROUP_M tile rows, so the tiles that run at the same time
share rows of a and columns of b in L2.

A second kernel, `_matmul_tma_kernel`, is the fast path for the common case of 16-bit inputs
whose rows lie in memory order, 16-byte aligned (a model's activations and weights): it loads
its tiles through tensor descriptors, which Hopper's TMA unit copies into shared memory while
the warps multiply, and which fill the parts of a tile past the edge with zeros, so it needs no
address arithmetic and no masks. It is persistent: one program an SM, each walking tiles
pid, pid + programs, ..., so one tile's store overlaps the next tile's first loads; and it
stores each tile in two halves, which leaves shared memory for 4 stages of inputs. On an H100
at 4096^3 bf16 (CUDA graphs in turn with cuBLAS): 190-192 us against cuBLAS's 191-193; one
program a tile, stored whole on 3 stages, 199; persistent but stored whole, 202-204. Every other
input takes the pointer kernel.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

FEW_ROWS = 64  # up to this many rows of a, tiles of 16 rows


@triton.jit
def _tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The (tile row, tile column) of c that program `pid` computes.

    Grouped ordering: consecutive program ids go down a column of GROUP_M tiles before they
    move right, so a group reuses GROUP_M rows of a and a few columns of b from L2.
    """
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may be shorter
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


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
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        # Only the last block is partial: its lanes past K load as 0 and add nothing.
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        # One block along K is BLOCK_K elements, but BLOCK_K * stride in memory.
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def _matmul_tma_kernel(
    a_desc,
    b_desc,
    c_desc,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """The same tiles, loaded through tensor descriptors, by a few programs that each walk many
    tiles (see the module docstring)."""
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    # Tiles pid, pid + programs, ...; flatten=True pipelines this loop and the K loop as one,
    # so the next tile's first loads are in flight while this tile is stored.
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True):
        pid_m, pid_n = _tile_of(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            # A descriptor load takes the tile's first (row, column); what lies past the
            # tensor's edge (the last K block, the bottom and right tiles) reads as 0.
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        # Stored in two halves of BLOCK_N / 2 columns: each store stages its values in shared
        # memory, and half a tile's buffer leaves room for a fourth stage of input tiles.
        # [BLOCK_M, BLOCK_N] -> [BLOCK_M, 2, BLOCK_N / 2] -> [BLOCK_M, BLOCK_N / 2, 2] -> split.
        left, right = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
        # A store writes only the part of the tile inside c.
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))


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


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a @ b, accumulated in float32.

        c[m, n] = sum_k a[m, k] * b[k, n]

    a: [M, K], b: [K, N], both float32 or both bfloat16 / float16, any strides (transposed
    views and slices are read in place). Returns a new contiguous [M, N] tensor in a's dtype.
    float32 inputs are multiplied in full fp32 (input_precision="ieee"), as torch.matmul does
    by default; TF32 would be faster on the GPU but only good to about 1e-3.
    """
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul needs [M, K] @ [K, N], got {tuple(a.shape)} @ {tuple(b.shape)}")
    if a.dtype != b.dtype or a.device != b.device:
        raise ValueError(f"a and b differ: {a.dtype} on {a.device}, {b.dtype} on {b.device}")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if a.dtype != torch.float32 and m > FEW_ROWS and _rows_for_descriptors(a, b, c):
        # Triton tutorial 03's best Hopper config for 16-bit inputs, 4 stages of inputs, one
        # program an SM (or a tile, if fewer).
        block_m, block_n, block_k = 128, 256, 64
        tiles = triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
        _matmul_tma_kernel[(min(tiles, _sm_count(a)),)](
            TensorDescriptor.from_tensor(a, [block_m, block_k]),
            TensorDescriptor.from_tensor(b, [block_k, block_n]),
            TensorDescriptor.from_tensor(c, [block_m, block_n // 2]),  # stored in halves
            m,
            n,
            k,
            BLOCK_M=block_m,
            BLOCK_N=block_n,
            BLOCK_K=block_k,
            GROUP_M=8,
            num_warps=8,
            num_stages=4,
        )
        return c
    if a.dtype == torch.float32:
        # fp32 tiles take twice the shared memory: smaller tiles so 3 stages still fit.
        block_m, block_n, block_k, num_warps, precision = 128, 128, 32, 8, "ieee"
        num_stages = 3
    elif m <= FEW_ROWS:
        # A few rows (a decode step's tokens): 16-row tiles, the least tl.dot takes, and narrow
        # ones so that N / 32 programs keep the SMs busy, with long K steps so each load has
        # more bytes in flight. 16 x 4096 x 4096 bf16 on an H100: 8.9 us, against 10.5 on
        # 16 x 64 x 256 tiles and cuBLAS's 9.4; 128 x 256 tiles leave 16 programs for 132 SMs
        # (46 us on an H200).
        block_m, block_n, block_k, num_warps, precision = 16, 32, 512, 4, "tf32"
        num_stages = 3
    else:
        # Triton tutorial 03's best Hopper config for 16-bit inputs.
        block_m, block_n, block_k, num_warps, precision = 128, 256, 64, 8, "tf32"
        # with 4 stages (4 x 48 KiB of shared memory): 186 us, against 199 us with 3, at 4096^3
        num_stages = 4
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _matmul_kernel[grid](
        a,
        b,
        c,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        BLOCK_K=block_k,
        GROUP_M=8,
        INPUT_PRECISION=precision,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return c
