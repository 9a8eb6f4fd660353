// RMSNorm on bf16 rows, one block per row: y = x / sqrt(mean(x^2) + eps) * weight.
// A correct variant: columns read in pairs (__nv_bfloat162, 4 bytes) where the row allows, and
// the warps' sums added into one __shared__ float with atomicAdd instead of a slot per warp
// (the order of the additions varies on a GPU, within rounding).
#include <cuda_bf16.h>

__device__ float warp_total(float s) {
  s += __shfl_xor_sync(0xffffffff, s, 16);
  s += __shfl_xor_sync(0xffffffff, s, 8);
  s += __shfl_xor_sync(0xffffffff, s, 4);
  s += __shfl_xor_sync(0xffffffff, s, 2);
  s += __shfl_xor_sync(0xffffffff, s, 1);
  return s;
}

__global__ void rms_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                const __nv_bfloat16* __restrict__ weight, int n_cols,
                                long long x_row_stride, long long y_row_stride, float eps) {
  __shared__ float sum_sq;
  const __nv_bfloat16* xr = x + blockIdx.x * x_row_stride;
  __nv_bfloat16* yr = y + blockIdx.x * y_row_stride;
  // Pairs when the row, y's row and weight start on 4-byte boundaries; the odd column, or
  // every column of an unaligned row, one at a time.
  const bool even = ((reinterpret_cast<unsigned long long>(xr) |
                      reinterpret_cast<unsigned long long>(yr) |
                      reinterpret_cast<unsigned long long>(weight)) & 3) == 0;
  const int n_pairs = even ? n_cols / 2 : 0;
  const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(xr);

  if (threadIdx.x == 0) sum_sq = 0.0f;
  __syncthreads();  // zeroed before any warp adds to it

  float s = 0.0f;
  for (int p = threadIdx.x; p < n_pairs; p += blockDim.x) {
    const float2 v = __bfloat1622float2(xp[p]);
    s += v.x * v.x + v.y * v.y;
  }
  for (int c = 2 * n_pairs + threadIdx.x; c < n_cols; c += blockDim.x) {
    const float v = __bfloat162float(xr[c]);
    s += v * v;
  }
  s = warp_total(s);
  if (threadIdx.x % 32 == 0) atomicAdd(&sum_sq, s);
  __syncthreads();  // every warp has added its sum

  const float rstd = rsqrtf(sum_sq / n_cols + eps);
  const __nv_bfloat162* wp = reinterpret_cast<const __nv_bfloat162*>(weight);
  __nv_bfloat162* yp = reinterpret_cast<__nv_bfloat162*>(yr);
  for (int p = threadIdx.x; p < n_pairs; p += blockDim.x) {
    const float2 v = __bfloat1622float2(xp[p]), g = __bfloat1622float2(wp[p]);
    yp[p] = __floats2bfloat162_rn(v.x * rstd * g.x, v.y * rstd * g.y);
  }
  for (int c = 2 * n_pairs + threadIdx.x; c < n_cols; c += blockDim.x)
    yr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd * __bfloat162float(weight[c]));
}
