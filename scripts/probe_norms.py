#!/usr/bin/env python3
"""Where t3's layer_norm at 4096 x 1000 and f3's decode fused_add_rmsnorm lose time to
torch.compile (issue 27): the same kernels with the weight loads moved ahead of the
reductions, several rows per program, other warp counts, and without the statistics stores.

    python scripts/probe_norms.py [--out DIR]      # GPU: a table, and probe-norms.json in DIR
    python scripts/probe_norms.py --check          # CPU interpreter: every variant's output
    python scripts/probe_norms.py --pairs [--compile-first]   # t3's wrappers against compile

Every time is GPU time per call in a CUDA graph whose calls rotate over enough input sets to
touch twice the L2 (tutor.bench.timing, as the bench times the learner, the reference and
torch.compile), so no call reads the previous call's data from the L2. torch.compile is timed
the same way in the same process, on the recipe's own eager function.
"""

# ruff: noqa: B023 - each lambda is timed at once, inside the loop that defines it
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from tune_sweep import load_solution  # noqa: E402


@triton.jit
def layer_norm_tile(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    n_rows,
    stride: tl.constexpr,
    N: tl.constexpr,
    eps,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EARLY: tl.constexpr,
    STATS: tl.constexpr,
    ONE_SWEEP: tl.constexpr = False,
):
    """ROWS rows per program as one [ROWS, BLOCK_N] tile; EARLY issues the weight and bias
    loads before the reductions, STATS=False leaves out the mean and rstd stores, ONE_SWEEP
    takes the variance as E[x^2] - mean^2, both sums from the loaded row at once."""
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    mask = (rows[:, None] < n_rows) & col_ok[None, :]
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if EARLY:
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / N
    xc = tl.where(mask, x - mean[:, None], 0.0)
    if ONE_SWEEP:
        var = tl.sum(x * x, axis=1) / N - mean * mean
    else:
        var = tl.sum(xc * xc, axis=1) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    if not EARLY:
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    if STATS:
        tl.store(mean_ptr + rows, mean, mask=rows < n_rows)
        tl.store(rstd_ptr + rows, rstd, mask=rows < n_rows)


@triton.jit
def layer_norm_row(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    stride: tl.constexpr,
    N: tl.constexpr,
    eps,
    BLOCK_N: tl.constexpr,
    EARLY: tl.constexpr,
):
    """The solution's 1-D row kernel, with EARLY as above."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if EARLY:
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / N + eps)
    if not EARLY:
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def add_rmsnorm_row(
    x_ptr,
    r_ptr,
    w_ptr,
    stride,
    n_cols,
    eps,
    BLOCK: tl.constexpr,
    EARLY: tl.constexpr,
    RSQRT: tl.constexpr,
):
    """f3's fused_add_rmsnorm kernel; EARLY loads the weight with x and the residual."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if EARLY:
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    h = x + r
    tl.store(r_ptr + row * stride + cols, h.to(r_ptr.dtype.element_ty), mask=mask)
    if RSQRT:
        rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    else:
        rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    if not EARLY:
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptr + row * stride + cols, (h * rstd * w).to(x_ptr.dtype.element_ty), mask=mask)


@triton.jit
def silu_and_mul_flat(x_ptr, out_ptr, d, total, BLOCK: tl.constexpr):
    """silu_and_mul over the output flattened to one index, as torch.compile writes it: a
    program's BLOCK outputs may span two rows."""
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < total
    row = idx // d
    col = idx - row * d
    gate = tl.load(x_ptr + row * 2 * d + col, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * 2 * d + d + col, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + idx, (gate * tl.sigmoid(gate) * up).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def silu_and_mul_const(
    x_ptr,
    out_ptr,
    x_row_stride: tl.constexpr,
    out_row_stride: tl.constexpr,
    d: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    """f3's silu_and_mul kernel with d and the row strides compile-time constants, as
    torch.compile bakes them in (t3's row kernels gained 0.8 µs that way)."""
    row_idx = tl.program_id(0).to(tl.int64)
    offsets = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < d
    x_row = x_ptr + row_idx * x_row_stride
    gate = tl.load(x_row + offsets, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_row + d + offsets, mask=mask, other=0.0).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(
        out_ptr + row_idx * out_row_stride + offsets, out.to(out_ptr.dtype.element_ty), mask=mask
    )


@triton.jit
def _empty(x_ptr):
    pass


class Rotated:
    """`sets` copies of one case's inputs, and the GPU time of a call that takes one of them."""

    def __init__(self, make, nbytes: int, gpu: bool):
        from tutor.bench.timing import graph_input_sets, l2_bytes

        count = graph_input_sets(nbytes, l2_bytes()) if gpu else 1
        self.sets = [make() for _ in range(count)]
        self.gpu = gpu

    def time(self, call) -> float | None:
        from tutor.bench.timing import graph_us

        if not self.gpu:
            return None
        n = len(self.sets)
        return graph_us(lambda k: call(*self.sets[k % n]))

    def record(self, rows: list, case: str, variant: str, call, right: bool) -> None:
        """Add `call`'s row, timed; a wrong output gets a WRONG row and is not timed."""
        if not right:
            rows.append({"case": case, "variant": variant, "us": None, "note": "WRONG"})
            print(f"{case:<24} {variant:<40} WRONG", flush=True)
            return
        us = self.time(call)
        rows.append({"case": case, "variant": variant, "us": us})
        print(f"{case:<24} {variant:<40} {us if us is None else round(us, 2)}", flush=True)


def layer_norm_section(rows: list, m: int, n: int, device: str, dtype) -> None:
    import torch.nn.functional as F

    t3 = load_solution("t3_layernorm")
    gpu = device == "cuda"

    def make():
        x = torch.randn(m, n, device=device, dtype=dtype) + 0.5
        w = torch.randn(n, device=device, dtype=dtype) * 0.1 + 1
        b = torch.randn(n, device=device, dtype=dtype) * 0.1
        y = torch.empty_like(x)
        stats = torch.empty(2, m, device=device, dtype=torch.float32)
        return x, w, b, y, stats

    case = f"layer_norm {m}x{n}"
    inputs = Rotated(make, 2 * m * n * x_size(dtype) + 8 * m, gpu)
    x0, w0, b0, y0, s0 = inputs.sets[0]
    ref = F.layer_norm(x0.float(), (n,), w0.float(), b0.float(), 1e-5)

    def record(variant: str, call, check: bool = True) -> None:
        call(*inputs.sets[0])
        right = not check or torch.allclose(y0.float(), ref, atol=2e-2, rtol=2e-2)
        inputs.record(rows, case, variant, call, right)

    if gpu:
        compiled = torch.compile(lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5), dynamic=False)
        record("torch.compile", lambda x, w, b, y, s: y.copy_(compiled(x, w, b)), check=False)
        record("torch.compile, y written by it", lambda x, w, b, y, s: compiled(x, w, b), False)
    record("solution", lambda x, w, b, y, s: y.copy_(t3.layer_norm(x, w, b)[0]))
    record("solution, as called", lambda x, w, b, y, s: t3.layer_norm(x, w, b), check=False)
    block = triton.next_power_of_2(n)
    for warps in (1, 2, 4, 8):
        for early in (False, True):
            record(
                f"1-D row warps={warps}" + (" early w,b" if early else ""),
                lambda x, w, b, y, s: layer_norm_row[(m,)](
                    x, w, b, y, s[0], s[1], n, n, 1e-5, BLOCK_N=block, EARLY=early, num_warps=warps
                ),
            )
    for per_program in (1, 2, 4, 8):
        for warps in (1, 2, 4, 8):
            if per_program * block > 16384 or per_program * block < 32 * warps * 4:
                continue
            for early, stats in ((False, True), (True, True), (True, False)):
                grid = (triton.cdiv(m, per_program),)
                record(
                    f"tile rows={per_program} warps={warps}"
                    + (" early w,b" if early else "")
                    + ("" if stats else " no stats"),
                    lambda x, w, b, y, s: layer_norm_tile[grid](
                        x, w, b, y, s[0], s[1], m, n, n, 1e-5,
                        ROWS=per_program, BLOCK_N=block, EARLY=early, STATS=stats,
                        num_warps=warps,
                    ),
                )  # fmt: skip


def decode_section(rows: list, t: int, h: int, device: str, dtype) -> None:
    f3 = load_solution("f3_fused_norm_act")
    gpu = device == "cuda"
    case = f"fused_add_rmsnorm t={t} h={h}"

    def make():
        return (
            torch.randn(t, h, device=device, dtype=dtype),
            torch.randn(t, h, device=device, dtype=dtype),
            torch.randn(h, device=device, dtype=dtype) * 0.1 + 1,
        )

    inputs = Rotated(make, 4 * t * h * x_size(dtype) + h * x_size(dtype), gpu)

    def expected(x, r, w):
        hh = x.float() + r.float()
        return (hh * torch.rsqrt(hh.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)

    def record(variant: str, call) -> None:
        x, r, w = (v.clone() for v in inputs.sets[0])
        want = expected(x, r, w)
        call(x, r, w)
        right = torch.allclose(x.float(), want.float(), atol=2e-2, rtol=2e-2)
        inputs.record(rows, case, variant, call, right)

    if gpu:
        e = torch.empty(1, device=device)
        us = inputs.time(lambda *_: _empty[(1,)](e))
        rows.append({"case": "empty launch", "variant": "triton", "us": us})
        print(f"{'empty launch':<24} {'triton':<40} {round(us, 2)}", flush=True)
        sys.path.insert(0, str(ROOT / "drills" / "bench"))
        from f3 import fused_add_rmsnorm_eager

        compiled = torch.compile(fused_add_rmsnorm_eager, dynamic=False)
        record("torch.compile", lambda x, r, w: compiled(x, r, w))
    record("solution", lambda x, r, w: f3.fused_add_rmsnorm(x, r, w))
    for warps in (4, 8, 16, 32):
        for early in (False, True):
            for rsqrt in (True, False):
                record(
                    f"warps={warps}" + (" early w" if early else "") + ("" if rsqrt else " 1/sqrt"),
                    lambda x, r, w: add_rmsnorm_row[(t,)](
                        x, r, w, h, h, 1e-6, BLOCK=triton.next_power_of_2(h),
                        EARLY=early, RSQRT=rsqrt, num_warps=warps,
                    ),
                )  # fmt: skip


def silu_section(rows: list, t: int, d: int, device: str, dtype) -> None:
    """f3's silu_and_mul at a decode shape: the solution's kernel at other block sizes and warp
    counts, and a flattened one-index kernel, beside torch.compile, inputs rotated."""
    f3 = load_solution("f3_fused_norm_act")
    gpu = device == "cuda"
    case = f"silu_and_mul t={t} d={d}"
    inputs = Rotated(
        lambda: (
            torch.randn(t, 2 * d, device=device, dtype=dtype),
            torch.empty(t, d, device=device, dtype=dtype),
        ),
        3 * t * d * x_size(dtype),
        gpu,
    )
    x0, out0 = inputs.sets[0]
    gate, up = x0.float().chunk(2, dim=-1)
    want = gate * torch.sigmoid(gate) * up

    def record(variant: str, call, check: bool = True) -> None:
        out0.zero_()
        call(*inputs.sets[0])
        right = not check or torch.allclose(out0.float(), want, atol=2e-2, rtol=2e-2)
        inputs.record(rows, case, variant, call, right)

    if gpu:
        sys.path.insert(0, str(ROOT / "drills" / "bench"))
        from f3 import silu_and_mul_eager

        compiled = torch.compile(silu_and_mul_eager, dynamic=False)
        record("torch.compile", lambda x, out: compiled(x), check=False)
    record("solution, as called", lambda x, out: f3.silu_and_mul(x), check=False)
    for block in (256, 512, 1024, 2048, 4096):
        for warps in (1, 2, 4, 8):
            if block < 32 * warps * 2:
                continue
            grid = (t, triton.cdiv(d, block))
            solution_grid = grid[::-1]  # the solution's kernel takes column blocks on axis 0
            record(
                f"2-D block={block} warps={warps}",
                lambda x, out: f3._silu_and_mul_kernel[solution_grid](
                    x, out, 2 * d, d, d, BLOCK_SIZE=block, num_warps=warps
                ),
            )
            record(
                f"2-D block={block} warps={warps} constexpr d, strides",
                lambda x, out: silu_and_mul_const[grid](
                    x, out, 2 * d, d, d, BLOCK_SIZE=block, num_warps=warps
                ),
            )
            flat_grid = (triton.cdiv(t * d, block),)
            record(
                f"flat block={block} warps={warps}",
                lambda x, out: silu_and_mul_flat[flat_grid](
                    x, out, d, t * d, BLOCK=block, num_warps=warps
                ),
            )


def pairs_section(rows: list, m: int, n: int, compile_first: bool) -> None:
    """t3's two wrappers against torch.compile at one shape, each allocating its output as a
    caller sees it, in the order asked: is the gap between them the same in every process?"""
    import torch.nn.functional as F

    t3 = load_solution("t3_layernorm")
    nbytes = 4 * m * n
    inputs = Rotated(
        lambda: (
            torch.randn(m, n, device="cuda", dtype=torch.bfloat16) + 0.5,
            torch.randn(n, device="cuda", dtype=torch.bfloat16) * 0.1 + 1,
            torch.randn(n, device="cuda", dtype=torch.bfloat16) * 0.1,
        ),
        nbytes,
        gpu=True,
    )
    ops = {
        "layer_norm": (
            lambda x, w, b: t3.layer_norm(x, w, b),
            torch.compile(lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5), dynamic=False),
        ),
        "rms_norm": (
            lambda x, w, b: t3.rms_norm(x, w),
            torch.compile(lambda x, w, b: F.rms_norm(x, (n,), w, 1e-6), dynamic=False),
        ),
    }
    for op, (solution, compiled) in ops.items():
        order = [("torch.compile", compiled), ("solution", solution)]
        for variant, call in order if compile_first else order[::-1]:
            us = inputs.time(call)
            rows.append({"case": f"{op} {m}x{n}", "variant": variant, "us": us})
            print(f"{op} {m}x{n:<10} {variant:<20} {us:.2f}", flush=True)


def x_size(dtype) -> int:
    return torch.empty(0, dtype=dtype).element_size()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="CPU interpreter, outputs only")
    parser.add_argument("--pairs", action="store_true", help="only t3's wrappers against compile")
    parser.add_argument("--compile-first", action="store_true", help="with --pairs: compile first")
    parser.add_argument("--silu", action="store_true", help="only f3's silu_and_mul at T=16")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.check and os.environ.get("TRITON_INTERPRET") != "1":
        print("--check needs TRITON_INTERPRET=1 set before Python starts", file=sys.stderr)
        return 2
    device = "cpu" if args.check else "cuda"
    dtype = torch.float32 if args.check else torch.bfloat16
    rows: list = []
    if args.pairs:
        pairs_section(rows, 4096, 1000, args.compile_first)
    elif args.silu:
        silu_section(rows, *((3, 300) if args.check else (16, 14336)), device, dtype)
    elif args.check:
        layer_norm_section(rows, 9, 100, device, dtype)
        decode_section(rows, 3, 100, device, dtype)
        silu_section(rows, 3, 300, device, dtype)
    else:
        layer_norm_section(rows, 4096, 1000, device, dtype)
        decode_section(rows, 16, 4096, device, dtype)
        layer_norm_section(rows, 4096, 8192, device, dtype)
    wrong = [r for r in rows if r.get("note") == "WRONG"]
    if args.out:
        meta = {
            "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
            "torch": torch.__version__,
            "triton": triton.__version__,
        }
        (Path(args.out) / "probe-norms.json").write_text(
            json.dumps({**meta, "rows": rows}, indent=1)
        )
    print(f"{len(rows)} rows, {len(wrong)} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
