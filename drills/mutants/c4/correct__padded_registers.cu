// Softmax over the last dimension, one warp per row: y = exp(x - max(x)) / sum(exp(x - max(x))).
// A correct variant, as a Triton program holds a block: each lane keeps COLS values of its row
// as floats in registers, the slots past the row's end set to -inf, which neither wins the max
// nor adds to the sum (exp(-inf) = 0), so the max and the sum need no bounds. Rows longer than
// 32 * COLS are read in three passes.
#include <cuda_bf16.h>
#include <math_constants.h>

constexpr int COLS = 32;  // values a lane holds: rows up to 1024

__device__ float warp_reduce_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 16));
  v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 8));
  v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 4));
  v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 2));
  v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 1));
  return v;
}

__device__ float warp_reduce_sum(float v) {
  v += __shfl_xor_sync(0xffffffff, v, 16);
  v += __shfl_xor_sync(0xffffffff, v, 8);
  v += __shfl_xor_sync(0xffffffff, v, 4);
  v += __shfl_xor_sync(0xffffffff, v, 2);
  v += __shfl_xor_sync(0xffffffff, v, 1);
  return v;
}

__device__ float f32(float v) { return v; }
__device__ float f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ void write(float* p, float v) { *p = v; }
__device__ void write(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

template <typename T>
__device__ void softmax_warp(T* y, const T* x, int n_rows, int n_cols, long long sx, long long sy) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y, lane = threadIdx.x;
  if (row >= n_rows) return;
  const T* in = x + row * sx;
  T* out = y + row * sy;
  if (n_cols <= 32 * COLS) {
    float v[COLS];
#pragma unroll
    for (int k = 0; k < COLS; ++k) {
      const int c = lane + 32 * k;
      v[k] = c < n_cols ? f32(in[c]) : -CUDART_INF_F;  // padding
    }
    float m = v[0];
#pragma unroll
    for (int k = 1; k < COLS; ++k) m = fmaxf(m, v[k]);
    m = warp_reduce_max(m);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < COLS; ++k) {
      v[k] = __expf(v[k] - m);
      s += v[k];
    }
    s = warp_reduce_sum(s);
#pragma unroll
    for (int k = 0; k < COLS; ++k)
      if (lane + 32 * k < n_cols) write(out + lane + 32 * k, v[k] / s);
    return;
  }
  float m = -CUDART_INF_F;
  for (int c = lane; c < n_cols; c += 32) m = fmaxf(m, f32(in[c]));
  m = warp_reduce_max(m);
  float s = 0.0f;
  for (int c = lane; c < n_cols; c += 32) s += __expf(f32(in[c]) - m);
  s = warp_reduce_sum(s);
  for (int c = lane; c < n_cols; c += 32) write(out + c, __expf(f32(in[c]) - m) / s);
}

__global__ void softmax_bf16_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                    int n_rows, int n_cols, long long x_row_stride,
                                    long long y_row_stride) {
  softmax_warp(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}

__global__ void softmax_f32_kernel(float* y, const float* __restrict__ x, int n_rows, int n_cols,
                                   long long x_row_stride, long long y_row_stride) {
  softmax_warp(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}
