"""m1 bug (none named): copy-paste typo, the tile's columns start at pn * BM instead of
pn * BN (BM = 32, BN = 16): columns 16-31, 48-63, ... never written; grid is right."""
import torch
import triton
import triton.language as tl


@triton.jit
def _tile_mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pm = tl.program_id(1)
    pn = tl.program_id(0)
    m_idx = pm * BM + tl.arange(0, BM)
    n_idx = pn * BM + tl.arange(0, BN)
    k_idx = tl.arange(0, BK)
    m_in = m_idx < M
    n_in = n_idx < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kb in range(tl.cdiv(K, BK)):
        kcur = kb * BK + k_idx
        k_in = kcur < K
        a = tl.load(a_ptr + m_idx[:, None] * sam + kcur[None, :] * sak,
                    mask=m_in[:, None] & k_in[None, :], other=0.0)
        b = tl.load(b_ptr + kcur[:, None] * sbk + n_idx[None, :] * sbn,
                    mask=k_in[:, None] & n_in[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + m_idx[:, None] * scm + n_idx[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=m_in[:, None] & n_in[None, :])


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError("shapes")
    if a.dtype != b.dtype or a.device != b.device:
        raise ValueError("dtype/device")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = 32, 16, 32
    grid = (triton.cdiv(N, BN), triton.cdiv(M, BM))
    _tile_mm[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), BM=BM, BN=BN, BK=BK,
                   PREC="ieee" if a.dtype == torch.float32 else "tf32")
    return c
