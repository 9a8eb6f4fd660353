// AXPY on bf16, in place: y[i] = a * x[i] + y[i] for every i below n.
//
// The drill launches axpy_kernel with blocks of 256 threads and a grid it chooses itself: a
// few blocks in the tests, enough to fill the GPU in the bench. The grid usually has fewer
// threads than there are elements, so each thread loops (a grid-stride loop): it starts at
// its index in the whole grid and steps by the number of threads in the grid until it
// reaches n. Any grid then updates every element exactly once.
//
// Keep indices in size_t (or long long): blockIdx.x * blockDim.x is unsigned int arithmetic,
// and an int index overflows past 2^31 elements. Compute in float: __bfloat162float after
// each load, __float2bfloat16 at the store.
#include <cuda_bf16.h>

__global__ void axpy_kernel(__nv_bfloat16* y, const __nv_bfloat16* __restrict__ x, float a,
                            long long n) {
  TODO_KERNEL("axpy_kernel: y[i] = a * x[i] + y[i] for i = first, first + stride, ... below n");
  // TODO: first = this thread's index in the grid, (size_t)blockIdx.x * blockDim.x +
  // threadIdx.x; stride = the grid's thread count, (size_t)gridDim.x * blockDim.x.
  // Loop from first while i < n, adding stride at each step.
}
