// Softmax over the last dimension, one warp per row: y = exp(x - max(x)) / sum(exp(x - max(x))).
// A correct variant: one value at a time (lane l takes columns l, l + 32, ...), three passes
// over the row, each reading it from memory again.
#include <cuda_bf16.h>
#include <math_constants.h>

#define FULL 0xffffffffu

__device__ float max_of_warp(float v) {
  for (int k = 16; k >= 1; k >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, k));
  return v;
}

__device__ float sum_of_warp(float v) {
  for (int k = 16; k >= 1; k >>= 1) v += __shfl_xor_sync(FULL, v, k);
  return v;
}

__device__ float load_f(const float* p) { return *p; }
__device__ float load_f(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ void store_f(float* p, float v) { *p = v; }
__device__ void store_f(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

template <typename T>
__device__ void one_row_per_warp(T* y, const T* x, int n_rows, int n_cols, long long sx,
                                 long long sy) {
  const int lane = threadIdx.x & 31;
  const long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
  if (r >= n_rows) return;
  const T* xr = x + r * sx;
  T* yr = y + r * sy;

  float m = -CUDART_INF_F;
  for (int c = lane; c < n_cols; c += 32) m = fmaxf(m, load_f(xr + c));
  m = max_of_warp(m);

  float s = 0.0f;
  for (int c = lane; c < n_cols; c += 32) s += __expf(load_f(xr + c) - m);
  s = sum_of_warp(s);

  for (int c = lane; c < n_cols; c += 32) store_f(yr + c, __expf(load_f(xr + c) - m) / s);
}

__global__ void softmax_bf16_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                    int n_rows, int n_cols, long long x_row_stride,
                                    long long y_row_stride) {
  one_row_per_warp(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}

__global__ void softmax_f32_kernel(float* y, const float* __restrict__ x, int n_rows, int n_cols,
                                   long long x_row_stride, long long y_row_stride) {
  one_row_per_warp(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}
