// RMSNorm on bf16 rows, one block per row: y = x / sqrt(mean(x^2) + eps) * weight.
// A correct variant: one value at a time (thread t takes columns t, t + blockDim.x, ...), and
// x read twice, once for the sum of squares and once for the output.
//
// The row's sum of squares is reduced in two levels, as FlashInfer's and vLLM's RMSNorm do:
// each warp sums its lanes' partial sums with shuffles, lane 0 of every warp puts the warp's
// sum in shared memory, and the first warp sums those. Everything is accumulated in fp32.
#include <cuda_bf16.h>

constexpr int WARP = 32;

// The sum of `value` over the 32 lanes of a warp, in every lane (a butterfly of shuffles).
__device__ float warp_sum(float value) {
  for (int offset = WARP / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffff, value, offset);
  return value;
}

// The sum of `value` over every thread of the block, in every thread.
__device__ float block_sum(float value) {
  __shared__ float warp_sums[32];  // one slot per warp: at most 1024 threads
  __shared__ float total;
  const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
  const int warps = blockDim.x / WARP;  // the host launches whole warps
  value = warp_sum(value);
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();  // every warp's sum is written before the first warp reads them
  if (warp == 0) {
    value = warp_sum(lane < warps ? warp_sums[lane] : 0.0f);
    if (lane == 0) total = value;
  }
  __syncthreads();  // the total is written before anyone reads it
  return total;
}

__global__ void rms_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                const __nv_bfloat16* __restrict__ weight, int n_cols,
                                long long x_row_stride, long long y_row_stride, float eps) {
  const __nv_bfloat16* x_row = x + blockIdx.x * x_row_stride;
  __nv_bfloat16* y_row = y + blockIdx.x * y_row_stride;
  float sum_sq = 0.0f;
  for (int col = threadIdx.x; col < n_cols; col += blockDim.x) {
    const float v = __bfloat162float(x_row[col]);
    sum_sq += v * v;
  }
  const float rstd = rsqrtf(block_sum(sum_sq) / n_cols + eps);
  for (int col = threadIdx.x; col < n_cols; col += blockDim.x) {
    const float v = __bfloat162float(x_row[col]) * rstd;
    y_row[col] = __float2bfloat16(v * __bfloat162float(weight[col]));
  }
}
