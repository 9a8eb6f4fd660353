// RMSNorm on bf16 rows, one block per row: y = x / sqrt(mean(x^2) + eps) * weight.
// Slow but correct, for the perf coach: the row is kept between the two passes in a 48 KB
// __shared__ array of floats. Right, but an SM has 228 KB of shared memory, so only 4 such
// blocks fit on one: at 1000 columns (blocks of 128 threads) that is 16 warps an SM where the
// registers-only kernel keeps 64, too few loads in flight to hide the wait for memory.
// bench-case: 1
#include <cuda_bf16.h>

constexpr int CACHED = 12000;  // floats: 48000 bytes, near the 48 KB a block may declare

__device__ float sum_over_warp(float v) {
  for (int step = 16; step > 0; step /= 2) v += __shfl_xor_sync(0xffffffff, v, step);
  return v;
}

__global__ void rms_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                const __nv_bfloat16* __restrict__ weight, int n_cols,
                                long long x_row_stride, long long y_row_stride, float eps) {
  __shared__ float row[CACHED];
  __shared__ float sums[32];
  __shared__ float inv_rms;
  const __nv_bfloat16* in = x + blockIdx.x * x_row_stride;
  __nv_bfloat16* out = y + blockIdx.x * y_row_stride;
  const bool cached = n_cols <= CACHED;  // wider rows are read again from memory

  float acc = 0.0f;
  for (int c = threadIdx.x; c < n_cols; c += blockDim.x) {
    const float v = __bfloat162float(in[c]);
    if (cached) row[c] = v;
    acc += v * v;
  }
  acc = sum_over_warp(acc);
  if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    const float s = sum_over_warp(threadIdx.x < blockDim.x / 32 ? sums[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) inv_rms = rsqrtf(s / n_cols + eps);
  }
  __syncthreads();  // inv_rms written, and every thread's part of row

  for (int c = threadIdx.x; c < n_cols; c += blockDim.x) {
    const float v = cached ? row[c] : __bfloat162float(in[c]);
    out[c] = __float2bfloat16(v * inv_rms * __bfloat162float(weight[c]));
  }
}
