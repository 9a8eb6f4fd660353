"""Which tiled transpose reaches 80% of copy bandwidth for bf16 at 8192 x 8192?

    python -m lab.transpose_tiles      # on a GPU machine with CuPy, about 30 s

Issue 57 asks c3's reference for 80% of copy at 8192². Its helper's nvcc probe on an H100
(2026-12-07) read 45% for the drill's shape (a 32 x 32 tile a block of 32 x 8 threads) and 77%
for 64 x 64 tiles of bf16 pairs. A block of 256 threads moving a 2 KB tile keeps at most 16 KB
a SM in flight (8 blocks of 256 threads), short of what an H100's DRAM wants; the probe times
the drill's kernel with fewer rows of threads (more blocks a SM, the host's launch the only
change), 64 x 64 tiles with bf16 pairs, and 64 x 64 tiles moved 16 bytes a thread each way
(8 elements gathered from a tile column per store, row pads of 2, 4 and 6), against torch's
copy, each timed with do_bench over three input sets (384 MB, past the L2), each checked
against x.T.
"""

from __future__ import annotations

from collections.abc import Callable

SOURCE = r"""
typedef unsigned short u16;

// The drill's shape: a 32 x 32 tile, blockDim.x = 32, any number of rows of threads.
extern "C" __global__ void t32(u16* y, const u16* __restrict__ x, int R, int C) {
  __shared__ u16 tile[32][33];
  int tx = threadIdx.x, ty = threadIdx.y, col = blockIdx.x * 32 + tx;
  for (int r = ty; r < 32; r += blockDim.y) {
    int row = blockIdx.y * 32 + r;
    if (row < R && col < C) tile[r][tx] = x[(long long)row * C + col];
  }
  __syncthreads();
  int y_col = blockIdx.y * 32 + tx;
  for (int r = ty; r < 32; r += blockDim.y) {
    int y_row = blockIdx.x * 32 + r;
    if (y_row < C && y_col < R) y[(long long)y_row * R + y_col] = tile[tx][r];
  }
}

// A 64 x 64 tile, 32 x 8 threads, two bf16 values a load and a store (R, C multiples of 64).
template <int PAD>
__device__ void pairs(unsigned* y, const unsigned* __restrict__ x, int R, int C) {
  __shared__ u16 tile[64][64 + PAD];
  int tx = threadIdx.x, ty = threadIdx.y;
  int pair = blockIdx.x * 32 + tx;  // x's columns 2 * pair and 2 * pair + 1
  #pragma unroll
  for (int r = ty; r < 64; r += 8) {
    unsigned v = x[(long long)(blockIdx.y * 64 + r) * (C / 2) + pair];
    tile[r][2 * tx] = v & 0xffff;
    tile[r][2 * tx + 1] = v >> 16;
  }
  __syncthreads();
  int y_pair = blockIdx.y * 32 + tx;  // y's columns: the tile's rows 2 * tx and 2 * tx + 1
  #pragma unroll
  for (int r = ty; r < 64; r += 8) {
    unsigned v = (unsigned)tile[2 * tx][r] | ((unsigned)tile[2 * tx + 1][r] << 16);
    y[(long long)(blockIdx.x * 64 + r) * (R / 2) + y_pair] = v;
  }
}
extern "C" __global__ void t64p2(unsigned* y, const unsigned* x, int R, int C) {
  pairs<2>(y, x, R, C);
}
extern "C" __global__ void t64p1(unsigned* y, const unsigned* x, int R, int C) {
  pairs<1>(y, x, R, C);
}

// A 64 x 64 tile, 256 threads, 16 bytes (8 bf16) a load and a store: each store gathers 8
// values of one tile column.
template <int PAD>
__device__ void vectors(uint4* y, const uint4* __restrict__ x, int R, int C) {
  __shared__ u16 tile[64][64 + PAD];
  int t = threadIdx.x, chunk = t % 8;
  #pragma unroll
  for (int p = 0; p < 2; ++p) {
    int row = t / 8 + 32 * p;
    uint4 v = x[((long long)(blockIdx.y * 64 + row) * C + blockIdx.x * 64) / 8 + chunk];
    const u16* e = reinterpret_cast<const u16*>(&v);
    #pragma unroll
    for (int k = 0; k < 8; ++k) tile[row][chunk * 8 + k] = e[k];
  }
  __syncthreads();
  #pragma unroll
  for (int p = 0; p < 2; ++p) {
    int j = t / 8 + 32 * p;  // row j of y's tile is column j of x's
    uint4 v;
    u16* e = reinterpret_cast<u16*>(&v);
    #pragma unroll
    for (int k = 0; k < 8; ++k) e[k] = tile[chunk * 8 + k][j];
    y[((long long)(blockIdx.x * 64 + j) * R + blockIdx.y * 64) / 8 + chunk] = v;
  }
}
extern "C" __global__ void t64v2(uint4* y, const uint4* x, int R, int C) { vectors<2>(y, x, R, C); }
extern "C" __global__ void t64v4(uint4* y, const uint4* x, int R, int C) { vectors<4>(y, x, R, C); }
extern "C" __global__ void t64v6(uint4* y, const uint4* x, int R, int C) { vectors<6>(y, x, R, C); }
"""

N = 8192


def main() -> None:
    import cupy as cp
    import torch
    import triton.testing

    module = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    xs = [torch.randn(N, N, device="cuda").to(torch.bfloat16) for _ in range(3)]
    ys = [torch.empty(N, N, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    want = xs[0].t().contiguous()
    moved = 2 * N * N * 2  # x read, y written

    def launcher(name: str, grid: tuple, block: tuple) -> Callable[..., None]:
        kernel = module.get_function(name)

        def launch(x: torch.Tensor, y: torch.Tensor) -> None:
            stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
            pointers = (cp.uint64(y.data_ptr()), cp.uint64(x.data_ptr()))
            kernel(grid, block, (*pointers, cp.int32(N), cp.int32(N)), stream=stream)

        return launch

    cases = {
        "torch copy": lambda x, y: y.copy_(x),
        "torch x.t() copied": lambda x, y: y.copy_(x.t()),
        "32x32 tile, 32x8 threads (c3)": launcher("t32", (N // 32, N // 32), (32, 8)),
        "32x32 tile, 32x4 threads": launcher("t32", (N // 32, N // 32), (32, 4)),
        "32x32 tile, 32x2 threads": launcher("t32", (N // 32, N // 32), (32, 2)),
        "32x32 tile, 32x1 threads": launcher("t32", (N // 32, N // 32), (32, 1)),
        "64x64 tile, bf16 pairs, pad 2": launcher("t64p2", (N // 64, N // 64), (32, 8)),
        "64x64 tile, bf16 pairs, pad 1": launcher("t64p1", (N // 64, N // 64), (32, 8)),
        "64x64 tile, 16 B a thread, pad 2": launcher("t64v2", (N // 64, N // 64), (256,)),
        "64x64 tile, 16 B a thread, pad 4": launcher("t64v4", (N // 64, N // 64), (256,)),
        "64x64 tile, 16 B a thread, pad 6": launcher("t64v6", (N // 64, N // 64), (256,)),
    }
    print(f"{torch.cuda.get_device_name()}, bf16 {N} x {N}")
    copy_gbps = None
    for name, fn in cases.items():
        fn(xs[0], ys[0])
        torch.cuda.synchronize()
        right = name == "torch copy" or torch.equal(ys[0], want)
        turn = iter(range(1 << 30))

        def rotated(fn=fn, turn=turn) -> None:
            k = next(turn) % 3
            fn(xs[k], ys[k])

        ms = triton.testing.do_bench(rotated, warmup=50, rep=300)
        gbps = moved / ms / 1e6
        copy_gbps = copy_gbps or gbps
        share = 100 * gbps / copy_gbps
        wrong = "" if right else "  WRONG"
        print(f"{name:34s} {ms * 1000:8.1f} µs {gbps:7.0f} GB/s {share:5.1f}% of copy{wrong}")


if __name__ == "__main__":
    main()
