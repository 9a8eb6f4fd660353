// y = x.T through shared memory with no padding: the tile is 32 x 32 exactly, and element
// (r, c) is kept at column c ^ r of row r (an XOR swizzle, as CUTLASS lays out its tiles). A
// warp that walks down a column of the tile then touches 32 different columns of storage,
// spread over the banks as the +1 pad spreads them. The block's 256 threads are counted
// 0..255 and take elements 256 apart, in x's order on the way in and in y's order on the way
// out.
#include <cuda_bf16.h>

#define SIDE 32

__device__ __forceinline__ int swizzled(int r, int c) { return c ^ r; }  // r, c in 0..31

__global__ void transpose_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                 int n_rows, int n_cols, long long x_row_stride,
                                 long long y_row_stride) {
  __shared__ __nv_bfloat16 buf[SIDE][SIDE];
  const int me = threadIdx.y * blockDim.x + threadIdx.x;
  const int threads = blockDim.x * blockDim.y;
  const long long top = (long long)blockIdx.y * SIDE, left = (long long)blockIdx.x * SIDE;

  for (int k = me; k < SIDE * SIDE; k += threads) {
    const int r = k / SIDE, c = k % SIDE;  // neighbours in k are neighbours along x's row
    if (top + r < n_rows && left + c < n_cols)
      buf[r][swizzled(r, c)] = x[(top + r) * x_row_stride + left + c];
  }
  __syncthreads();
  for (int k = me; k < SIDE * SIDE; k += threads) {
    const int c = k / SIDE, r = k % SIDE;  // neighbours in k are neighbours along y's row
    if (left + c < n_cols && top + r < n_rows)
      y[(left + c) * y_row_stride + top + r] = buf[r][swizzled(r, c)];
  }
}
