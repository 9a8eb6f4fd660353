"""A correct t1 written differently: 0.5 * x * (1 + tanh z) = x * sigmoid(2z), Horner form."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, y_ptr, count, CHUNK: tl.constexpr):
    lanes = tl.program_id(0) * CHUNK + tl.arange(0, CHUNK)
    live = lanes < count
    x = tl.load(x_ptr + lanes, mask=live, other=0.0).to(tl.float32)
    x2 = x * x
    two_z = x * (1.5957691216057308 + 0.0713548162726009 * x2)  # 2 * sqrt(2/pi) * (x + c x^3)
    tl.store(y_ptr + lanes, (x * tl.sigmoid(two_z)).to(y_ptr.dtype.element_ty), mask=live)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    src = x.contiguous()
    out = torch.empty_like(src)
    count = src.numel()
    _gelu[(triton.cdiv(count, 2048),)](src, out, count, CHUNK=2048, num_warps=8)
    return out.view(x.shape)
