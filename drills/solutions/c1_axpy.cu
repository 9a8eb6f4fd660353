// AXPY on bf16, in place: y[i] = a * x[i] + y[i] for every i below n, computed in float.
//
// The drill chooses the grid (a few blocks in the tests, enough to fill the GPU in the
// bench), and it has fewer threads than elements. So every thread walks a grid-stride loop:
// it starts at its index in the whole grid and steps by the grid's thread count until it
// passes n. Any grid then updates every element once, and at each step neighbouring threads
// take neighbouring elements, so a warp's loads and stores are coalesced.
//
// Where x and y both start on a 16-byte boundary, the loop walks 16-byte vectors of 8 bf16
// (one load of each and one store a step); the n % 8 elements after the last whole vector,
// and every element of a tensor that is not aligned, go through the same loop one at a time.
#include <cuda_bf16.h>

constexpr int VEC = 8;  // bf16 values in one 16-byte load

// Eight bf16 values, moved as one 16-byte load or store.
union Vec8 {
  uint4 bits;
  __nv_bfloat16 v[VEC];
};

__device__ __nv_bfloat16 axpy_one(float a, __nv_bfloat16 x, __nv_bfloat16 y) {
  return __float2bfloat16(a * __bfloat162float(x) + __bfloat162float(y));
}

__device__ bool aligned16(const void* p) {
  return reinterpret_cast<unsigned long long>(p) % 16 == 0;
}

__global__ void axpy_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x, float a,
                            long long n) {
  // 64-bit indices: blockIdx.x * blockDim.x alone is unsigned int arithmetic, which wraps at
  // 2^32, and an int index overflows past 2^31 elements.
  const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t done = 0;  // the elements the vector loop updated
  if (aligned16(x) && aligned16(y)) {
    const size_t n_vecs = (size_t)n / VEC;
    const uint4* x_vecs = reinterpret_cast<const uint4*>(x);
    uint4* y_vecs = reinterpret_cast<uint4*>(y);
    for (size_t v = first; v < n_vecs; v += stride) {
      Vec8 xv, yv;
      xv.bits = x_vecs[v];
      yv.bits = y_vecs[v];
      for (int k = 0; k < VEC; ++k) yv.v[k] = axpy_one(a, xv.v[k], yv.v[k]);
      y_vecs[v] = yv.bits;
    }
    done = n_vecs * VEC;
  }
  for (size_t i = done + first; i < (size_t)n; i += stride) y[i] = axpy_one(a, x[i], y[i]);
}
