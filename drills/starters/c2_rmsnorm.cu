// RMSNorm on bf16 rows, one block per row: y = x / sqrt(mean(x^2) + eps) * weight.
//
// The drill launches rms_norm_kernel with one block per row, of blockDim.x threads: one for
// every 8 columns, in whole warps, at most 1024 (a row of 1000 gets 128, one of 4096 gets 512).
// Reduce the row's sum of squares in two levels: a warp's lanes with shuffles
// (__shfl_xor_sync), then the warps' sums through __shared__ memory, finished by one warp.
// Accumulate in fp32; read and write bf16 with __bfloat162float / __float2bfloat16.
#include <cuda_bf16.h>

constexpr int WARP = 32;

// The sum of `value` over the 32 lanes of a warp, in every lane.
__device__ float warp_sum(float value) {
  // TODO: a loop of __shfl_xor_sync over offsets 16, 8, 4, 2, 1
  return value;
}

// The sum of `value` over every thread of the block, in every thread.
__device__ float block_sum(float value) {
  // TODO: warp_sum, lane 0 of each warp writes a __shared__ slot, __syncthreads, the first
  // warp sums the slots (only the slots of warps that exist), then shares the total.
  return value;
}

__global__ void rms_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                const __nv_bfloat16* __restrict__ weight, int n_cols,
                                long long x_row_stride, long long y_row_stride, float eps) {
  TODO_KERNEL("rms_norm_kernel: the row's sum of squares, then y = x * rstd * weight");
  // TODO: row blockIdx.x of x starts at x + blockIdx.x * x_row_stride (y likewise);
  // each thread takes the columns threadIdx.x, threadIdx.x + blockDim.x, ...
  // Every thread calls block_sum, even one with no column (it adds 0).
}
