"""M2 mutant (row-stride): a grouped 1-D grid whose x addresses are m * K + k (rows assumed K
apart), w read through its strides as [BLOCK_K, BLOCK_N] tiles, GELU written through sigmoid."""
import torch
import triton
import triton.language as tl


@triton.jit
def _lg(X, W, Bv, Y, M, N, K, s_xm, s_xk, s_wn, s_wk, s_ym, s_yn,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
        GROUP_M: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * num_n
    first_m = (pid // width) * GROUP_M
    rows_here = tl.minimum(num_m - first_m, GROUP_M)
    tile_m = first_m + (pid % width) % rows_here
    tile_n = (pid % width) // rows_here
    om = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    on = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = tl.arange(0, BLOCK_K)
    m_ok = om < M
    n_ok = on < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(tl.cdiv(K, BLOCK_K)):
        kidx = kb * BLOCK_K + ok
        k_ok = kidx < K
        xa = tl.load(X + om[:, None] * K + kidx[None, :], mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        wb = tl.load(W + kidx[:, None] * s_wk + on[None, :] * s_wn, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc = tl.dot(xa, wb, acc, input_precision=PREC)
    bias = tl.load(Bv + on, mask=n_ok, other=0.0).to(tl.float32)
    v = acc + bias[None, :]
    y = v * tl.sigmoid(1.5957691216057308 * (v + 0.044715 * v * v * v))
    tl.store(Y + om[:, None] * s_ym + on[None, :] * s_yn, y.to(Y.dtype.element_ty),
             mask=m_ok[:, None] & n_ok[None, :])


def linear_gelu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if x.ndim != 2 or w.ndim != 2 or x.size(1) != w.size(1) or tuple(b.shape) != (w.size(0),):
        raise ValueError("shapes")
    if not (x.dtype == w.dtype == b.dtype) or not (x.device == w.device == b.device):
        raise ValueError("dtype/device")
    M, K = x.shape
    N = w.size(0)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    bm, bn, bk = 32, 32, 32
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    _lg[grid](x, w, b, y, M, N, K, *x.stride(), *w.stride(), *y.stride(),
              BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
              PREC="ieee" if x.dtype == torch.float32 else "tf32")
    return y
