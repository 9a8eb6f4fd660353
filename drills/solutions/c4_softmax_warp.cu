// Softmax over the last dimension, one warp per row: y = exp(x - max(x)) / sum(exp(x - max(x))).
//
// The 32 lanes of a warp share a row: each lane takes its columns, and the row's max and sum
// are put together with shuffles (__shfl_xor_sync butterflies): no shared memory, no barrier.
// A block holds several warps, so several rows. bf16 and fp32 rows run the same code, a
// template over the element type; the two __global__ kernels only name the type.
//
// A row whose width is a multiple of a 16-byte vector (8 bf16, 4 floats) and whose start is
// 16-byte aligned is read in vectors; up to HELD vectors a lane stay in registers between the
// three passes (max, sum, output), so x is read from memory once. A longer row is read three
// times in vectors, any other row three times one value at a time.
#include <cuda_bf16.h>
#include <math_constants.h>  // CUDART_INF_F

constexpr int WARP = 32;
constexpr int HELD = 16;  // vectors a lane keeps: rows up to 4096 bf16 or 2048 floats

// The max, and the sum, of `value` over the 32 lanes of a warp, in every lane.
__device__ float warp_max(float value) {
  for (int offset = WARP / 2; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffff, value, offset));
  return value;
}

__device__ float warp_sum(float value) {
  for (int offset = WARP / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffff, value, offset);
  return value;
}

__device__ float to_float(float v) { return v; }
__device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ T from_float(float v);
template <> __device__ float from_float<float>(float v) { return v; }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

// 16 bytes of a row: 8 bf16 or 4 floats, moved by one load or store.
template <typename T> union Vec {
  static constexpr int N = 16 / sizeof(T);
  uint4 bits;
  T v[N];
};

// W values of a row from p: a 16-byte vector (W = Vec<T>::N) or one value (W = 1).
template <typename T, int W> __device__ Vec<T> load_chunk(const T* p) {
  Vec<T> chunk;
  if constexpr (W == Vec<T>::N) chunk.bits = *reinterpret_cast<const uint4*>(p);
  else chunk.v[0] = *p;
  return chunk;
}

template <typename T, int W> __device__ void store_chunk(T* p, const Vec<T>& chunk) {
  if constexpr (W == Vec<T>::N) *reinterpret_cast<uint4*>(p) = chunk.bits;
  else *p = chunk.v[0];
}

// A row read once: lane l takes vectors l, l + 32, ..., at most HELD of them, and keeps them in
// registers for the three passes.
template <typename T>
__device__ void softmax_held(T* y_row, const T* x_row, int n_cols, int lane) {
  constexpr int N = Vec<T>::N;
  const int n_vecs = n_cols / N;
  Vec<T> held[HELD];
  float row_max = -CUDART_INF_F;  // not 0: a row may be all negative
#pragma unroll
  for (int k = 0; k < HELD; ++k) {  // unrolled: held[k] is a register, not local memory
    if (lane + k * WARP < n_vecs) {
      held[k] = load_chunk<T, N>(x_row + (lane + k * WARP) * N);
      for (int j = 0; j < N; ++j) row_max = fmaxf(row_max, to_float(held[k].v[j]));
    }
  }
  row_max = warp_max(row_max);
  float row_sum = 0.0f;
#pragma unroll
  for (int k = 0; k < HELD; ++k) {
    if (lane + k * WARP < n_vecs)
      for (int j = 0; j < N; ++j) row_sum += __expf(to_float(held[k].v[j]) - row_max);
  }
  const float inv_sum = 1.0f / warp_sum(row_sum);
#pragma unroll
  for (int k = 0; k < HELD; ++k) {
    if (lane + k * WARP < n_vecs) {
      Vec<T> out;
      for (int j = 0; j < N; ++j)
        out.v[j] = from_float<T>(__expf(to_float(held[k].v[j]) - row_max) * inv_sum);
      store_chunk<T, N>(y_row + (lane + k * WARP) * N, out);
    }
  }
}

// Any row: lane l takes chunks of W values at columns W * l, W * (l + 32), ..., and reads them
// again for each pass.
template <typename T, int W>
__device__ void softmax_looped(T* y_row, const T* x_row, int n_cols, int lane) {
  float row_max = -CUDART_INF_F;
  for (int c = lane * W; c < n_cols; c += WARP * W) {
    const Vec<T> x = load_chunk<T, W>(x_row + c);
    for (int j = 0; j < W; ++j) row_max = fmaxf(row_max, to_float(x.v[j]));
  }
  row_max = warp_max(row_max);
  float row_sum = 0.0f;
  for (int c = lane * W; c < n_cols; c += WARP * W) {
    const Vec<T> x = load_chunk<T, W>(x_row + c);
    for (int j = 0; j < W; ++j) row_sum += __expf(to_float(x.v[j]) - row_max);
  }
  const float inv_sum = 1.0f / warp_sum(row_sum);
  for (int c = lane * W; c < n_cols; c += WARP * W) {
    Vec<T> y = load_chunk<T, W>(x_row + c);
    for (int j = 0; j < W; ++j)
      y.v[j] = from_float<T>(__expf(to_float(y.v[j]) - row_max) * inv_sum);
    store_chunk<T, W>(y_row + c, y);
  }
}

__device__ bool aligned16(const void* p) {
  return reinterpret_cast<unsigned long long>(p) % 16 == 0;
}

// Row blockIdx.x * blockDim.y + threadIdx.y, lane threadIdx.x: a block of 32 x ROWS threads.
template <typename T>
__device__ void softmax_rows(T* y, const T* x, int n_rows, int n_cols, long long x_row_stride,
                             long long y_row_stride) {
  const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= n_rows) return;  // the grid is rounded up to whole blocks; the whole warp leaves
  const T* x_row = x + row * x_row_stride;
  T* y_row = y + row * y_row_stride;
  const int lane = threadIdx.x;
  constexpr int N = Vec<T>::N;
  if (n_cols % N != 0 || !aligned16(x_row) || !aligned16(y_row))
    softmax_looped<T, 1>(y_row, x_row, n_cols, lane);
  else if (n_cols <= HELD * WARP * N)
    softmax_held<T>(y_row, x_row, n_cols, lane);
  else
    softmax_looped<T, N>(y_row, x_row, n_cols, lane);
}

__global__ void softmax_bf16_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                                    int n_rows, int n_cols, long long x_row_stride,
                                    long long y_row_stride) {
  softmax_rows(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}

__global__ void softmax_f32_kernel(float* y, const float* __restrict__ x, int n_rows, int n_cols,
                                   long long x_row_stride, long long y_row_stride) {
  softmax_rows(y, x, n_rows, n_cols, x_row_stride, y_row_stride);
}
