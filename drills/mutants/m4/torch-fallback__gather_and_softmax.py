"""m4 mutant: the pages gathered with torch indexing and the attention computed by torch
(matmul, softmax): right, but no Triton kernel does the work."""

from __future__ import annotations

import torch


def paged_decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    batch, n_heads, head_dim = q.shape
    _, page_size, n_kv_heads, _ = k_cache.shape
    group = n_heads // n_kv_heads
    out = torch.empty_like(q)
    for b in range(batch):
        n = int(seq_lens[b])
        tokens = torch.arange(n, device=q.device)
        pages = page_table[b, tokens // page_size].long()
        k = k_cache[pages, tokens % page_size].float()  # [n, H_kv, D]
        v = v_cache[pages, tokens % page_size].float()
        for h in range(n_heads):
            scores = torch.matmul(k[:, h // group], q[b, h].float()) * sm_scale
            out[b, h] = torch.matmul(torch.softmax(scores, dim=0), v[:, h // group]).to(q.dtype)
    return out
