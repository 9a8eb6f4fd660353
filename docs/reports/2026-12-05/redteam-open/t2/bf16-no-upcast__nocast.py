"""t2 buggy: the row is never converted to float32 (math in the input dtype)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_N: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK_N)
    msk = c < n_cols
    x = tl.load(x_ptr + r * x_row_stride + c, mask=msk, other=float("-inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    den = tl.sum(num, axis=0)
    tl.store(y_ptr + r * y_row_stride + c, num / den, mask=msk)


def softmax(x):
    n = x.shape[-1]
    x = x if x.stride(-1) == 1 else x.contiguous()
    xr = x.reshape(-1, n)
    yr = torch.empty(xr.shape, dtype=x.dtype, device=x.device)
    _softmax_kernel[(xr.shape[0],)](xr, yr, xr.stride(0), yr.stride(0), n,
                                    BLOCK_N=triton.next_power_of_2(n))
    return yr.view(x.shape)
