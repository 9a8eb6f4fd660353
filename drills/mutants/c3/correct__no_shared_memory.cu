// y = x.T with no shared memory: every thread copies its elements straight from x to y. Right,
// but only one side is coalesced. Here a warp's 32 threads take 32 neighbouring columns of one
// row of x (a coalesced read) and write them down one column of y: 32 writes n_rows elements
// apart, each to a 32-byte sector of its own, so the card moves far more bytes than the data.
#include <cuda_bf16.h>

__global__ void transpose_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                 int n_rows, int n_cols, long long x_row_stride,
                                 long long y_row_stride) {
  const long long j = (long long)blockIdx.x * 32 + threadIdx.x;  // x's column, y's row
  if (j >= n_cols) return;
  for (int step = 0; step < 32; step += blockDim.y) {
    const long long i = (long long)blockIdx.y * 32 + step + threadIdx.y;  // x's row
    if (i < n_rows) y[j * y_row_stride + i] = x[i * x_row_stride + j];
  }
}
