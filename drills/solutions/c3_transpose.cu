// Transpose through shared memory: y = x.T, for x [n_rows, n_cols] and y [n_cols, n_rows] in
// bf16, as the classic CUDA transpose does it.
//
// Each block moves one 32 x 32 tile. Its 32 x 8 threads read the tile from x a row at a time
// (a warp reads 32 neighbouring columns of one row: one coalesced read), each thread taking
// every 8th row. After a barrier they write it to y a row of y at a time: a row of y is a
// column of the tile, which shared memory serves in any order, so the write is coalesced too.
// The tile's rows are padded to 33 elements: a column then spreads over the 32 banks.
// Edge tiles hang over x's last rows and columns, and are guarded on the way in (x's bounds)
// and on the way out (y's bounds: the same two numbers, swapped).
#include <cuda_bf16.h>

constexpr int TILE = 32;  // a tile of 32 x 32 elements; blockDim.x == TILE

__global__ void transpose_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                 int n_rows, int n_cols, long long x_row_stride,
                                 long long y_row_stride) {
  __shared__ __nv_bfloat16 tile[TILE][TILE + 1];  // +1: tile[0][c], tile[1][c], ... spread
  const int tx = threadIdx.x, ty = threadIdx.y;

  // In: the tile at rows blockIdx.y * TILE.., columns blockIdx.x * TILE.. of x.
  const int col = blockIdx.x * TILE + tx;
  for (int r = ty; r < TILE; r += blockDim.y) {
    const int row = blockIdx.y * TILE + r;
    if (row < n_rows && col < n_cols) tile[r][tx] = x[row * x_row_stride + col];
  }
  __syncthreads();  // every element of the tile is in shared memory before any is read back

  // Out: the same elements at rows blockIdx.x * TILE.., columns blockIdx.y * TILE.. of y.
  // Thread tx writes y's column blockIdx.y * TILE + tx, which is row tx of the tile.
  const int y_col = blockIdx.y * TILE + tx;
  for (int r = ty; r < TILE; r += blockDim.y) {
    const int y_row = blockIdx.x * TILE + r;
    if (y_row < n_cols && y_col < n_rows) y[y_row * y_row_stride + y_col] = tile[tx][r];
  }
}
