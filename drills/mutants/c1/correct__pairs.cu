// Two elements at a time as __nv_bfloat162 where x and y start on a 4-byte boundary, then
// the last element of an odd n (or every element of unaligned tensors) one at a time.
#include <cuda_bf16.h>

__global__ void axpy_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x, float a,
                            long long n) {
  const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  const size_t nthreads = gridDim.x * (size_t)blockDim.x;
  size_t start = 0;
  const unsigned long long bits = (unsigned long long)x | (unsigned long long)y;
  if (bits % 4 == 0) {
    const size_t pairs = (size_t)n / 2;
    const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(x);
    __nv_bfloat162* y2 = reinterpret_cast<__nv_bfloat162*>(y);
    for (size_t p = tid; p < pairs; p += nthreads) {
      const float2 xf = __bfloat1622float2(x2[p]);
      const float2 yf = __bfloat1622float2(y2[p]);
      y2[p] = __floats2bfloat162_rn(a * xf.x + yf.x, a * xf.y + yf.y);
    }
    start = 2 * pairs;
  }
  for (size_t i = start + tid; i < (size_t)n; i += nthreads)
    y[i] = __float2bfloat16(a * __bfloat162float(x[i]) + __bfloat162float(y[i]));
}
