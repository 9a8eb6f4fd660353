// The lesson's kernel: one element at a time, in a size_t grid-stride loop.
#include <cuda_bf16.h>

__global__ void axpy_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x, float a,
                            long long n) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;  // threads in the whole grid
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride) {
    const float v = a * __bfloat162float(x[i]) + __bfloat162float(y[i]);
    y[i] = __float2bfloat16(v);
  }
}
