// RMSNorm on bf16 rows, one block per row: y = x / sqrt(mean(x^2) + eps) * weight.
//
// The row's sum of squares is reduced in two levels, as FlashInfer's and vLLM's RMSNorm do:
// each warp sums its lanes' partial sums with shuffles, lane 0 of every warp puts the warp's
// sum in shared memory, and the first warp sums those. Everything is accumulated in fp32.
//
// A row whose width is a multiple of 8 and whose start is 16-byte aligned is read 8 bf16 at a
// time, one 16-byte load, and each thread keeps its vectors in registers between the sum and
// the output: x is read from memory once. Other rows are read one value at a time, twice.
#include <cuda_bf16.h>

constexpr int WARP = 32;
constexpr int VEC = 8;   // bf16 values in one 16-byte load
constexpr int HELD = 2;  // vectors a thread keeps in registers (1024 threads: 16384 columns)

// The sum of `value` over the 32 lanes of a warp, in every lane (a butterfly of shuffles).
__device__ float warp_sum(float value) {
  for (int offset = WARP / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffff, value, offset);
  return value;
}

// The sum of `value` over every thread of the block, in every thread.
__device__ float block_sum(float value) {
  __shared__ float warp_sums[WARP];  // one slot per warp: at most 1024 threads
  __shared__ float total;
  const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
  const int warps = blockDim.x / WARP;  // the host launches whole warps
  value = warp_sum(value);
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();  // every warp's sum is written before the first warp reads them
  if (warp == 0) {
    value = warp_sum(lane < warps ? warp_sums[lane] : 0.0f);  // slots past `warps` hold garbage
    if (lane == 0) total = value;
  }
  __syncthreads();  // the total is written before anyone reads it
  return total;
}

// Eight bf16 values, moved as one 16-byte load or store.
union Vec8 {
  uint4 bits;
  __nv_bfloat16 v[VEC];
};

__device__ float sum_of_squares(const Vec8& x) {
  float sum = 0.0f;
  for (int j = 0; j < VEC; ++j) {
    const float v = __bfloat162float(x.v[j]);
    sum += v * v;
  }
  return sum;
}

__device__ uint4 normalized(const Vec8& x, const uint4 weight_bits, float rstd) {
  Vec8 w, y;
  w.bits = weight_bits;
  for (int j = 0; j < VEC; ++j)
    y.v[j] = __float2bfloat16(__bfloat162float(x.v[j]) * rstd * __bfloat162float(w.v[j]));
  return y.bits;
}

// A row read in 16-byte vectors: vector i is columns 8i to 8i + 7, and thread t takes vectors
// t, t + blockDim.x, ... The first HELD of them stay in registers for the second pass.
__device__ void rms_norm_vectors(__nv_bfloat16* y_row, const __nv_bfloat16* x_row,
                                 const __nv_bfloat16* weight, int n_cols, float eps) {
  const uint4* x_vecs = reinterpret_cast<const uint4*>(x_row);
  const uint4* w_vecs = reinterpret_cast<const uint4*>(weight);
  uint4* y_vecs = reinterpret_cast<uint4*>(y_row);
  const int n_vecs = n_cols / VEC;
  Vec8 held[HELD];
  float sum_sq = 0.0f;
#pragma unroll
  for (int k = 0; k < HELD; ++k) {  // unrolled: held[k] is a register, not local memory
    const int i = threadIdx.x + k * blockDim.x;
    if (i < n_vecs) {
      held[k].bits = x_vecs[i];
      sum_sq += sum_of_squares(held[k]);
    }
  }
  for (int i = threadIdx.x + HELD * blockDim.x; i < n_vecs; i += blockDim.x) {
    Vec8 rest;  // a row wider than the registers hold: the rest is read again below
    rest.bits = x_vecs[i];
    sum_sq += sum_of_squares(rest);
  }
  const float rstd = rsqrtf(block_sum(sum_sq) / n_cols + eps);
#pragma unroll
  for (int k = 0; k < HELD; ++k) {
    const int i = threadIdx.x + k * blockDim.x;
    if (i < n_vecs) y_vecs[i] = normalized(held[k], w_vecs[i], rstd);
  }
  for (int i = threadIdx.x + HELD * blockDim.x; i < n_vecs; i += blockDim.x) {
    Vec8 rest;
    rest.bits = x_vecs[i];
    y_vecs[i] = normalized(rest, w_vecs[i], rstd);
  }
}

// Any row: thread t takes columns t, t + blockDim.x, ...
__device__ void rms_norm_scalars(__nv_bfloat16* y_row, const __nv_bfloat16* x_row,
                                 const __nv_bfloat16* weight, int n_cols, float eps) {
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

__device__ bool aligned16(const void* p) {
  return reinterpret_cast<unsigned long long>(p) % 16 == 0;
}

// __launch_bounds__(1024, 2): blocks of up to 1024 threads, two of them on an SM at once. The
// compiler then fits a thread in 32 registers (65536 an SM / 2048 threads): every SM holds its
// full 64 warps, and a block of 1024 can launch at all (more than 64 registers a thread and it
// could not).
__global__ void __launch_bounds__(1024, 2)
    rms_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x,
                    const __nv_bfloat16* __restrict__ weight, int n_cols,
                    long long x_row_stride, long long y_row_stride, float eps) {
  const __nv_bfloat16* x_row = x + blockIdx.x * x_row_stride;
  __nv_bfloat16* y_row = y + blockIdx.x * y_row_stride;
  // The same choice in every thread of the block (it depends on the row): both paths reach
  // block_sum's barriers with every thread.
  if (n_cols % VEC == 0 && aligned16(x_row) && aligned16(y_row) && aligned16(weight))
    rms_norm_vectors(y_row, x_row, weight, n_cols, eps);
  else
    rms_norm_scalars(y_row, x_row, weight, n_cols, eps);
}
