// Transpose through shared memory: y = x.T, for x [n_rows, n_cols] and y [n_cols, n_rows] in
// bf16, each with its columns next to each other (rows x_row_stride and y_row_stride apart).
//
// The drill launches one block for each 32 x 32 tile of x, blocks of 32 x 8 threads:
// blockIdx.x picks the tile's columns of x (from blockIdx.x * 32), blockIdx.y its rows. The grid
// is rounded up, so the last tiles of each axis hang over x's edge. Each thread moves 4 rows of
// the tile: threadIdx.y, threadIdx.y + 8, ... Read the tile so that a warp reads 32 neighbouring
// columns of one row of x into a __shared__ tile; __syncthreads; then write it so that a warp
// writes 32 neighbouring columns of one row of y, which is a column of the tile.
// A transpose moves bits: no arithmetic, no conversion.
#include <cuda_bf16.h>

constexpr int TILE = 32;  // a tile of 32 x 32 elements; blockDim.x == TILE

__global__ void transpose_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                 int n_rows, int n_cols, long long x_row_stride,
                                 long long y_row_stride) {
  TODO_KERNEL("transpose_kernel: x's tile into shared memory, a barrier, then out to y");
  // TODO: a __shared__ __nv_bfloat16 tile[TILE][TILE + 1] (why + 1? the lesson says).
  // In: for r = threadIdx.y, r + blockDim.y, ... below TILE: row blockIdx.y * TILE + r of x,
  // column blockIdx.x * TILE + threadIdx.x, into tile[r][threadIdx.x], if inside x.
  // __syncthreads().
  // Out: row blockIdx.x * TILE + r of y, column blockIdx.y * TILE + threadIdx.x, from the
  // tile's row threadIdx.x, column r, if inside y (y has n_cols rows and n_rows columns).
}
