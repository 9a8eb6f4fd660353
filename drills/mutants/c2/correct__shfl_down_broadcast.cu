// RMSNorm on bf16 rows, one block per row: y = x / sqrt(mean(x^2) + eps) * weight.
// A correct variant: __shfl_down_sync leaves a warp's sum in lane 0 only (a reduction, not a
// butterfly), and thread 0 computes rstd and shares it through __shared__ memory.
#include <cuda_bf16.h>

#define FULL_MASK 0xffffffffu

// Lane 0 ends with the sum of the warp's 32 values; the other lanes hold partial sums.
__device__ float reduce_to_lane_zero(float v) {
  for (int delta = 16; delta >= 1; delta >>= 1) v += __shfl_down_sync(FULL_MASK, v, delta);
  return v;
}

__global__ void rms_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                const __nv_bfloat16* __restrict__ weight, int n_cols,
                                long long x_row_stride, long long y_row_stride, float eps) {
  __shared__ float partial[32];
  __shared__ float row_rstd;
  const long long row = blockIdx.x;
  const unsigned tid = threadIdx.x, lane = tid & 31u, warp_id = tid >> 5;
  const unsigned n_warps = blockDim.x >> 5;

  float acc = 0.0f;
  for (int c = tid; c < n_cols; c += blockDim.x) {
    const float v = __bfloat162float(x[row * x_row_stride + c]);
    acc += v * v;
  }
  acc = reduce_to_lane_zero(acc);
  if (lane == 0) partial[warp_id] = acc;
  __syncthreads();

  if (warp_id == 0) {
    float total = lane < n_warps ? partial[lane] : 0.0f;
    total = reduce_to_lane_zero(total);
    if (lane == 0) row_rstd = rsqrtf(total / (float)n_cols + eps);
  }
  __syncthreads();

  const float rstd = row_rstd;
  for (int c = tid; c < n_cols; c += blockDim.x) {
    const float v = __bfloat162float(x[row * x_row_stride + c]);
    y[row * y_row_stride + c] = __float2bfloat16(v * rstd * __bfloat162float(weight[c]));
  }
}
