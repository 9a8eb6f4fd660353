// A while loop over long long indices, the multiply-add fused with fmaf.
#include <cuda_bf16.h>

__global__ void axpy_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x, float a,
                            long long n) {
  const long long threads = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
  while (i < n) {
    float xi = __bfloat162float(x[i]);
    float yi = __bfloat162float(y[i]);
    y[i] = __float2bfloat16(fmaf(a, xi, yi));
    i += threads;
  }
}
