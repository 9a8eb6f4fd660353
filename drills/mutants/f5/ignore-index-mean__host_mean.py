"""f5 storing each row's raw loss (0 for ignored rows) and taking loss_rows.mean() on the host.

The mean runs over all T rows, the ignored ones included, and the gradient is scaled to match
it (1 / T): both are too small by n_valid / T. Blocks of 1024.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _ce_rows(x_ptr, t_ptr, g_ptr, loss_ptr, stride_x, stride_g, V, ignore_index, grad_scale,
             BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    y = tl.load(t_ptr + pid)
    if y == ignore_index:
        for k in range(0, V, BLOCK):
            idx = k + tl.arange(0, BLOCK)
            tl.store(g_ptr + pid * stride_g + idx, tl.zeros((BLOCK,), tl.float32)
                     .to(g_ptr.dtype.element_ty), mask=idx < V)
        tl.store(loss_ptr + pid, 0.0)
    else:
        mx = -float("inf")
        total = 0.0
        for k in range(0, V, BLOCK):
            idx = k + tl.arange(0, BLOCK)
            v = tl.load(x_ptr + pid * stride_x + idx, mask=idx < V,
                        other=-float("inf")).to(tl.float32)
            new_mx = tl.maximum(mx, tl.max(v, axis=0))
            total = total * tl.exp(mx - new_mx) + tl.sum(tl.exp(v - new_mx), axis=0)
            mx = new_mx
        lse = mx + tl.log(total)
        tl.store(loss_ptr + pid, lse - tl.load(x_ptr + pid * stride_x + y).to(tl.float32))
        for k in range(0, V, BLOCK):
            idx = k + tl.arange(0, BLOCK)
            v = tl.load(x_ptr + pid * stride_x + idx, mask=idx < V,
                        other=-float("inf")).to(tl.float32)
            g = tl.exp(v - lse) - tl.where(idx == y, 1.0, 0.0)
            tl.store(g_ptr + pid * stride_g + idx, (g * grad_scale).to(g_ptr.dtype.element_ty),
                     mask=idx < V)


def cross_entropy(logits, target, ignore_index=-100):
    logits = logits if logits.stride(-1) == 1 else logits.contiguous()
    T, V = logits.shape
    dlogits = torch.empty((T, V), dtype=logits.dtype, device=logits.device)
    loss_rows = torch.empty((T,), dtype=torch.float32, device=logits.device)
    _ce_rows[(T,)](logits, target, dlogits, loss_rows, logits.stride(0), dlogits.stride(0), V,
                   ignore_index, 1.0 / T, BLOCK=1024, num_warps=4)
    return loss_rows.mean(), dlogits
