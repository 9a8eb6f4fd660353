#!/usr/bin/env python3
"""Probe whether m3's reference gains from splitting each program's query rows in two halves
that share every key and value tile (issue 27: m3 at S = 1024 is the furthest from SDPA).

    python scripts/probe_attention_dp.py [--out DIR]
    TRITON_INTERPRET=1 python scripts/probe_attention_dp.py --check   # outputs only, CPU

Why it might: in one 128-row tile the softmax of a key block waits for its q @ k^T, and the
next p @ v waits for the softmax. Two independent halves give the scheduler a second chain to
issue while the first waits (FlashAttention-3 overlaps the two on Hopper by hand), and the
k and v tiles are loaded once for both. Every variant is checked against SDPA, then SDPA, the
solution and the variants are timed in turn in CUDA graphs (tutor.bench.timing.graphs_us), so
that all run at the same sustained clock.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from probe_tma import attn_fold  # noqa: E402 - the scripts folder is on the path
from tune_sweep import load_solution, save_json  # noqa: E402

LOG2E = 1.4426950408889634


@triton.jit
def _fold_blocks(
    acc0, l0, m0, acc1, l1, m1, q0, q1, k_desc, v_desc, row0, offs_m0, offs_m1, seq_len,
    qk_scale, lo, hi, MASKED: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    for start_n in tl.range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k_t = tl.trans(k_desc.load([(row0 + start_n).to(tl.int32), 0]))
        v = v_desc.load([(row0 + start_n).to(tl.int32), 0])
        acc0, l0, m0 = attn_fold(acc0, l0, m0, q0, k_t, v, offs_m0, offs_n, seq_len, qk_scale,
                                 MASKED, CAUSAL, True)  # fmt: skip
        acc1, l1, m1 = attn_fold(acc1, l1, m1, q1, k_t, v, offs_m1, offs_n, seq_len, qk_scale,
                                 MASKED, CAUSAL, True)  # fmt: skip
    return acc0, l0, m0, acc1, l1, m1


@triton.jit
def attn_halves(
    q_desc, k_desc, v_desc, o_desc, seq_len, qk_scale,
    CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """Contiguous [B, H, S, D] inputs seen as [B * H * S, D] rows; S a multiple of BLOCK_M."""
    HALF: tl.constexpr = BLOCK_M // 2
    block = tl.program_id(0)
    if CAUSAL:  # the longest rows first, as in the solution
        block = tl.num_programs(0) - 1 - block
    start_m = block * BLOCK_M
    row0 = tl.program_id(1).to(tl.int64) * seq_len
    offs_m0 = start_m + tl.arange(0, HALF)
    offs_m1 = offs_m0 + HALF
    q0 = q_desc.load([(row0 + start_m).to(tl.int32), 0])
    q1 = q_desc.load([(row0 + start_m + HALF).to(tl.int32), 0])
    m0 = tl.full([HALF], float("-inf"), tl.float32)
    m1 = tl.full([HALF], float("-inf"), tl.float32)
    l0 = tl.zeros([HALF], tl.float32)
    l1 = tl.zeros([HALF], tl.float32)
    acc0 = tl.zeros([HALF, HEAD_DIM], tl.float32)
    acc1 = tl.zeros([HALF, HEAD_DIM], tl.float32)
    if CAUSAL:
        full_end = start_m
        masked_end = start_m + BLOCK_M
    else:
        full_end = (seq_len // BLOCK_N) * BLOCK_N
        masked_end = seq_len
    acc0, l0, m0, acc1, l1, m1 = _fold_blocks(
        acc0, l0, m0, acc1, l1, m1, q0, q1, k_desc, v_desc, row0, offs_m0, offs_m1, seq_len,
        qk_scale, 0, full_end, False, CAUSAL, BLOCK_N,
    )  # fmt: skip
    acc0, l0, m0, acc1, l1, m1 = _fold_blocks(
        acc0, l0, m0, acc1, l1, m1, q0, q1, k_desc, v_desc, row0, offs_m0, offs_m1, seq_len,
        qk_scale, full_end, masked_end, True, CAUSAL, BLOCK_N,
    )  # fmt: skip
    o_desc.store([(row0 + start_m).to(tl.int32), 0], (acc0 / l0[:, None]).to(o_desc.dtype))
    o_desc.store([(row0 + start_m + HALF).to(tl.int32), 0], (acc1 / l1[:, None]).to(o_desc.dtype))


def halves_call(q, k, v, out, causal: bool, cfg):
    """A call that runs attn_halves on contiguous [B, H, S, D] q, k, v into `out`."""
    bsz, heads, seq, dim = q.shape
    bm, bn, warps, stages = cfg
    rows = [t.view(bsz * heads * seq, dim) for t in (q, k, v, out)]
    descs = [
        TensorDescriptor.from_tensor(r, [b, dim])
        for r, b in zip(rows, (bm // 2, bn, bn, bm // 2), strict=True)
    ]
    grid = (triton.cdiv(seq, bm), bsz * heads)
    scale = dim**-0.5 * LOG2E

    def call():
        attn_halves[grid](
            *descs, seq, scale, CAUSAL=causal, HEAD_DIM=dim, BLOCK_M=bm, BLOCK_N=bn,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        return out

    return call


def probe_shape(shape, configs, device: str, dtype, rows: list[dict]) -> None:
    from tutor.bench.timing import graphs_us

    bsz, heads, seq, dim, causal = shape
    tag = f"attention b{bsz} h{heads} s{seq} d{dim} causal={int(causal)}"
    flops = 4 * bsz * heads * seq * seq * dim * (0.5 if causal else 1.0)
    q, k, v = (torch.randn(bsz, heads, seq, dim, device=device, dtype=dtype) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    m3 = load_solution("m3_attention")
    calls = {"solution": lambda: m3.attention(q, k, v, causal=causal)}
    if device == "cuda":
        calls["SDPA"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    for cfg in configs:
        out = torch.empty_like(q)
        calls["halves BM={} BN={} w{} s{}".format(*cfg)] = halves_call(q, k, v, out, causal, cfg)
    timed = {}
    for name, call in calls.items():  # every output checked before anything is timed
        try:
            err = (call().float() - ref).abs().max().item()
            note = "ok" if err <= 2e-2 else f"WRONG: max diff {err:.3g}"
        except Exception as exc:  # noqa: BLE001 - a variant that fails is a row
            note = f"failed: {exc!s:.120}"
        if note == "ok":
            timed[name] = call
        if note != "ok" or device != "cuda":
            rows.append({"case": tag, "variant": name, "us": None, "note": note})
            print(f"{tag:<40} {name:<28} {note}", flush=True)
    if device != "cuda":
        return
    per_graph = max(2, min(100, int(20_000 / (flops / 500e6))))  # about 20 ms a graph
    graphed = {name: (lambda _k, call=call: call()) for name, call in timed.items()}
    times, failed = graphs_us(graphed, calls_per_graph=per_graph)
    for name, exc in failed.items():
        rows.append({"case": tag, "variant": name, "us": None, "note": f"failed: {exc!s:.120}"})
    sdpa = times.get("SDPA")
    for name, us in sorted(times.items(), key=lambda kv: kv[1]):
        share = f"{100 * sdpa / us:5.1f}% of SDPA" if sdpa else ""
        note = f"{flops / us / 1e6:6.1f} TFLOP/s {share}"
        rows.append({"case": tag, "variant": name, "us": us, "note": note})
        print(f"{tag:<40} {name:<28} {us:9.2f} µs  {note}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="small shapes, outputs only")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.check and os.environ.get("TRITON_INTERPRET") != "1":
        print("--check needs TRITON_INTERPRET=1 set before Python starts", file=sys.stderr)
        return 2
    rows: list[dict] = []
    if args.check:
        configs = [(32, 16, 4, 2), (64, 32, 4, 2)]
        shapes = [(1, 2, 128, 32, False), (1, 2, 128, 32, True)]
        device, dtype = "cpu", torch.float32
    else:
        configs = [(128, 64, 4, 3), (128, 128, 8, 3), (128, 64, 8, 3), (256, 64, 8, 3),
                   (256, 64, 8, 2), (256, 128, 8, 2)]  # fmt: skip
        shapes = [(4, 32, 1024, 128, False), (4, 32, 1024, 128, True),
                  (4, 32, 4096, 128, False), (4, 32, 4096, 128, True)]  # fmt: skip
        device, dtype = "cuda", torch.bfloat16
    for shape in shapes:
        probe_shape(shape, configs, device, dtype, rows)
    wrong = [r for r in rows if r["note"].startswith(("WRONG", "failed"))]
    save_json(args.out, "probe-attention-dp.json", {
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "torch": torch.__version__, "triton": triton.__version__, "rows": rows,
    })  # fmt: skip
    print(f"{len(rows)} rows, {len(wrong)} wrong or failed")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
