"""m1 bug (grid-too-small): grouped 1-D grid (kernel right); the host counts the tile columns with
BLOCK_M instead of BLOCK_N (bm = 32, bn = 16): too few programs."""
import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_mm(A, B, C, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP * n_n
    g = pid // per_group
    m0 = g * GROUP
    gsz = tl.minimum(n_m - m0, GROUP)
    tile_m = m0 + (pid % per_group) % gsz
    tile_n = (pid % per_group) // gsz
    om = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    on = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = tl.arange(0, BLOCK_K)
    pa = A + om[:, None] * s_am + ok[None, :] * s_ak
    pb = B + ok[:, None] * s_bk + on[None, :] * s_bn
    running = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(tl.cdiv(K, BLOCK_K)):
        lim = K - kb * BLOCK_K
        ta = tl.load(pa, mask=(om[:, None] < M) & (ok[None, :] < lim), other=0.0)
        tb = tl.load(pb, mask=(ok[:, None] < lim) & (on[None, :] < N), other=0.0)
        running = tl.dot(ta, tb, running, input_precision=PREC)
        pa += BLOCK_K * s_ak
        pb += BLOCK_K * s_bk
    tl.store(C + om[:, None] * s_cm + on[None, :] * s_cn, running.to(C.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError("shapes")
    if a.dtype != b.dtype or a.device != b.device:
        raise ValueError("dtype/device")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    bm, bn, bk = 32, 16, 16
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bm),)
    _grouped_mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                      c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP=4,
                      PREC="ieee" if a.dtype == torch.float32 else "tf32")
    return c
