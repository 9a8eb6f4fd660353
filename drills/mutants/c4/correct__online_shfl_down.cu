// Softmax over the last dimension, one warp per row: y = exp(x - max(x)) / sum(exp(x - max(x))).
// A correct variant in two passes: each lane keeps a running max and a sum rescaled whenever
// that max grows (online softmax, as T4), the lanes' pairs are merged with __shfl_down_sync
// into lane 0, and __shfl_sync hands lane 0's result to every lane.
#include <cuda_bf16.h>
#include <math_constants.h>

__device__ float as_float(float v) { return v; }
__device__ float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ void put(float* p, float v) { *p = v; }
__device__ void put(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// Merge (m, s) pairs: the max of the two, each sum rescaled to it. exp(-inf - -inf) is NaN, so
// a lane that saw no value (m = -inf, s = 0) is skipped, not rescaled.
__device__ void merge(float& m, float& s, float m_other, float s_other) {
  if (m_other == -CUDART_INF_F) return;
  if (m == -CUDART_INF_F) {
    m = m_other;
    s = s_other;
    return;
  }
  const float top = fmaxf(m, m_other);
  s = s * __expf(m - top) + s_other * __expf(m_other - top);
  m = top;
}

template <typename T>
__device__ void row_softmax(T* y, const T* x, int n_rows, int n_cols, long long sx, long long sy) {
  const unsigned lane = threadIdx.x;
  const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= n_rows) return;  // a whole warp: no lane of it is left waiting at a shuffle
  float m = -CUDART_INF_F, s = 0.0f;
  for (int c = lane; c < n_cols; c += 32) merge(m, s, as_float(x[row * sx + c]), 1.0f);
  for (int delta = 16; delta >= 1; delta /= 2) {
    const float m_other = __shfl_down_sync(0xffffffffu, m, delta);
    const float s_other = __shfl_down_sync(0xffffffffu, s, delta);
    merge(m, s, m_other, s_other);  // lanes past 31 - delta merge their own pair: ignored later
  }
  m = __shfl_sync(0xffffffffu, m, 0);
  s = __shfl_sync(0xffffffffu, s, 0);
  const float inv = 1.0f / s;
  for (int c = lane; c < n_cols; c += 32)
    put(y + row * sy + c, __expf(as_float(x[row * sx + c]) - m) * inv);
}

__global__ void softmax_bf16_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                    int n_rows, int n_cols, long long x_row_stride,
                                    long long y_row_stride) {
  row_softmax(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}

__global__ void softmax_f32_kernel(float* y, const float* __restrict__ x, int n_rows, int n_cols,
                                   long long x_row_stride, long long y_row_stride) {
  row_softmax(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}
