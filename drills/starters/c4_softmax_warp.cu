// Softmax over the last dimension, one warp per row: y = exp(x - max(x)) / sum(exp(x - max(x))).
//
// The drill launches blocks of 32 x 4 threads: threadIdx.y picks one of the block's four rows,
// threadIdx.x is the lane. The grid is rounded up to whole blocks, so the last block may have
// warps past the last row. The 32 lanes of a warp share a row: each lane takes the columns
// lane, lane + 32, lane + 64, ... and the row's max and sum come together through shuffles
// (__shfl_xor_sync), with no shared memory. Compute in fp32 (__bfloat162float, __expf), store
// in the row's type. x is bf16 or fp32: write the row's work once, as a template, and call it
// from both kernels.
#include <cuda_bf16.h>
#include <math_constants.h>  // CUDART_INF_F

constexpr int WARP = 32;

// The max of `value` over the 32 lanes of a warp, in every lane.
__device__ float warp_max(float value) {
  // TODO: a loop of __shfl_xor_sync over offsets 16, 8, 4, 2, 1, keeping the larger value
  return value;
}

// The sum of `value` over the 32 lanes of a warp, in every lane.
__device__ float warp_sum(float value) {
  // TODO: the same butterfly, adding
  return value;
}

__device__ float to_float(float v) { return v; }
__device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ T from_float(float v);
template <> __device__ float from_float<float>(float v) { return v; }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

// One row per warp, for either type of x and y.
template <typename T>
__device__ void softmax_rows(T* y, const T* x, int n_rows, int n_cols, long long x_row_stride,
                             long long y_row_stride) {
  TODO_KERNEL("softmax_rows: each warp's row max, sum of exp(x - max), then y");
  // TODO: the row is blockIdx.x * blockDim.y + threadIdx.y; a warp whose row is n_rows or
  // past it has nothing to do. Three loops over the lane's columns: the max (starting from
  // -CUDART_INF_F, not 0), warp_max; the sum of __expf(x - max), warp_sum; then each y.
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
