"""Time candidate launch settings of the reference kernels against their best comparison, in one
process on a GPU, to choose what the reference solutions use (issue 27).

    python -m lab.ref_sweep [--only rows,rowsn,decode,matmul,attention] [--out DIR]
    python -m lab.ref_sweep --check      # every variant's output against torch, small shapes

Every time is GPU time per call in CUDA-graph replay (tutor.bench.timing.graph_us, the median of
the replays), and every comparison (torch.compile, cuBLAS, SDPA) is timed the same way in the
same run. A variant whose output is wrong is reported as wrong and not timed. `--check` runs
on the CPU interpreter too (TRITON_INTERPRET=1), so the variants are proved before GPU time is
spent on them.
"""

# ruff: noqa: B023 - each lambda is timed at once, inside the loop that defines it
from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from lab.common import load_solution

# bfloat16 on the GPU; the CPU interpreter's bf16 tl.dot gives garbage, so --check uses fp32.
DTYPE = torch.bfloat16


# --- row kernels: ROWS rows per program, and row alignment the compiler can see -------------


@triton.jit
def _row_offsets(
    row0, n_rows, n_cols, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr, ALIGN: tl.constexpr
):
    rows = row0 + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    starts = rows * stride
    if ALIGN > 1:
        starts = tl.multiple_of(starts, ALIGN)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    return starts[:, None] + cols[None, :], mask, cols


@triton.jit
def softmax_rows(
    x_ptr,
    y_ptr,
    stride,
    n_rows,
    n_cols,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,
):
    row0 = tl.program_id(0).to(tl.int64) * ROWS
    offs, mask, cols = _row_offsets(row0, n_rows, n_cols, stride, ROWS, BLOCK_N, ALIGN)
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_rows(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    stride,
    n_rows,
    n_cols,
    eps,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,
):
    row0 = tl.program_id(0).to(tl.int64) * ROWS
    offs, mask, cols = _row_offsets(row0, n_rows, n_cols, stride, ROWS, BLOCK_N, ALIGN)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / n_cols
    xc = tl.where(mask, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    rows = row0 + tl.arange(0, ROWS)
    tl.store(mean_ptr + rows, mean, mask=rows < n_rows)
    tl.store(rstd_ptr + rows, rstd, mask=rows < n_rows)


@triton.jit
def rms_norm_rows(
    x_ptr,
    w_ptr,
    y_ptr,
    stride,
    n_rows,
    n_cols,
    eps,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,
):
    row0 = tl.program_id(0).to(tl.int64) * ROWS
    offs, mask, cols = _row_offsets(row0, n_rows, n_cols, stride, ROWS, BLOCK_N, ALIGN)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_rows_n(
    x_ptr,
    w_ptr,
    y_ptr,
    stride,
    n_rows,
    N: tl.constexpr,
    eps,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """rms_norm_rows with the row length a compile-time constant (as torch.compile does)."""
    row0 = tl.program_id(0).to(tl.int64) * ROWS
    # A constexpr passed to a jit helper stays one there: the mask is still fixed at compile time.
    offs, mask, cols = _row_offsets(row0, n_rows, N, stride, ROWS, BLOCK_N, 1)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_rows_n(
    x_ptr, y_ptr, stride, n_rows, N: tl.constexpr, ROWS: tl.constexpr, BLOCK_N: tl.constexpr
):
    """softmax_rows with the row length a compile-time constant."""
    row0 = tl.program_id(0).to(tl.int64) * ROWS
    offs, mask, cols = _row_offsets(row0, n_rows, N, stride, ROWS, BLOCK_N, 1)
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_rows_n(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    stride,
    n_rows,
    N: tl.constexpr,
    eps,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EARLY: tl.constexpr,
    STATS: tl.constexpr,
):
    """layer_norm_rows with the row length a compile-time constant; EARLY loads the weight and
    bias before the reductions (their latency hidden behind them); STATS=False skips the mean
    and rstd stores (to see what they cost)."""
    row0 = tl.program_id(0).to(tl.int64) * ROWS
    offs, mask, cols = _row_offsets(row0, n_rows, N, stride, ROWS, BLOCK_N, 1)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if EARLY:
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / N
    xc = tl.where(mask, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / N + eps)
    if not EARLY:
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    if STATS:
        rows = row0 + tl.arange(0, ROWS)
        tl.store(mean_ptr + rows, mean, mask=rows < n_rows)
        tl.store(rstd_ptr + rows, rstd, mask=rows < n_rows)


# --- matmul without masks when every block is whole ----------------------------------------


@triton.jit
def matmul_even(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    c_ptrs = c_ptr + offs_m[:, None] * scm + offs_n[None, :] * scn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def _empty(x_ptr):
    pass


# --- timing -----------------------------------------------------------------------------------


def time_us(call) -> float:
    """GPU µs per call in CUDA-graph replay, with as many calls per graph as fit ~2 ms."""
    from tutor.bench.timing import graph_us

    call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    rough_us = (time.perf_counter() - start) / 3 * 1e6
    calls = max(5, min(200, int(4000 / max(rough_us, 1.0))))
    return graph_us(lambda k: call(), calls=calls, replays=7)


class Table:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, case: str, variant: str, us: float | None, note: str = "", **extra) -> None:
        self.rows.append({"case": case, "variant": variant, "us": us, "note": note, **extra})
        shown = "—" if us is None else f"{us:9.2f} µs"
        print(f"{case:<36} {variant:<34} {shown:>12}  {note}", flush=True)


def measure(table: Table, case: str, variant: str, call, check=None, nbytes=None, flops=None):
    """Time `call` unless `check()` (run after one call) says its output is wrong."""
    try:
        call()
        if check is not None and not check():
            table.add(case, variant, None, "WRONG OUTPUT")
            return None
        us = time_us(call)
    except Exception as exc:  # noqa: BLE001 - a failing variant is a row, not the end
        table.add(case, variant, None, f"failed: {type(exc).__name__}: {str(exc)[:90]}")
        return None
    note = ""
    if nbytes and us:
        note = f"{nbytes / us / 1e3:7.0f} GB/s"
    if flops and us:
        note = f"{flops / us / 1e6:7.1f} TFLOP/s"
    table.add(case, variant, us, note)
    return us


def compiled(fn):
    return torch.compile(fn, dynamic=False)


# --- sections ---------------------------------------------------------------------------------


@dataclass
class RowInputs:
    """One row shape's tensors (bf16 x, weight, bias; y and the float32 statistics to write)."""

    x: torch.Tensor
    w: torch.Tensor
    b: torch.Tensor
    y: torch.Tensor
    mean: torch.Tensor
    rstd: torch.Tensor

    @property
    def tag(self) -> str:
        return "{}x{}".format(*self.x.shape)

    @property
    def block(self) -> int:
        return triton.next_power_of_2(self.x.shape[1])

    @property
    def io(self) -> int:
        return 2 * self.x.numel() * self.x.element_size()  # read once, written once

    def close(self, ref: torch.Tensor):
        return lambda: torch.allclose(self.y.float(), ref, atol=2e-2, rtol=2e-2)


def row_inputs(m: int, n: int, device: str) -> RowInputs:
    x = torch.randn(m, n, device=device, dtype=DTYPE) + 0.5
    mean = torch.empty(m, device=device, dtype=torch.float32)
    return RowInputs(
        x=x,
        w=torch.randn(n, device=device, dtype=DTYPE) * 0.1 + 1,
        b=torch.randn(n, device=device, dtype=DTYPE) * 0.1,
        y=torch.empty_like(x),
        mean=mean,
        rstd=torch.empty_like(mean),
    )


# torch's own op for each row kernel, as torch.compile is given it
ROW_OPS = {
    "softmax": lambda t, w, b: torch.softmax(t.float(), -1).to(t.dtype),
    "layer_norm": lambda t, w, b: F.layer_norm(t, (t.shape[-1],), w, b, 1e-5),
    "rms_norm": lambda t, w, b: F.rms_norm(t, (t.shape[-1],), w, 1e-6),
}


def compile_columns(table: Table, device: str, r: RowInputs, ops) -> None:
    """torch.compile of each op in `ops` at this shape, timed as the variants are (GPU only)."""
    if device != "cuda":
        return
    for op in ops:
        fn = compiled(ROW_OPS[op])
        measure(table, f"{op} {r.tag}", "torch.compile", lambda: fn(r.x, r.w, r.b), nbytes=r.io)


def rows_section(table: Table, device: str, shapes) -> None:
    t2, t3 = load_solution("t2_softmax"), load_solution("t3_layernorm")
    for m, n in shapes:
        r = row_inputs(m, n, device)
        x, w, b, y, mean, rstd, io = r.x, r.w, r.b, r.y, r.mean, r.rstd, r.io
        ref_sm = torch.softmax(x.float(), -1)
        ref_ln = F.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
        ref_rms = F.rms_norm(x.float(), (n,), w.float(), 1e-6)
        tag = r.tag
        compile_columns(table, device, r, ("softmax", "layer_norm", "rms_norm"))
        measure(
            table, f"softmax {tag}", "solution", lambda: y.copy_(t2.softmax(x)), r.close(ref_sm), io
        )
        measure(
            table,
            f"layer_norm {tag}",
            "solution",
            lambda: y.copy_(t3.layer_norm(x, w, b)[0]),
            r.close(ref_ln),
            io,
        )
        measure(
            table,
            f"rms_norm {tag}",
            "solution",
            lambda: y.copy_(t3.rms_norm(x, w)),
            r.close(ref_rms),
            io,
        )
        # The row alignment alone first (rows=1, both aligns), then rows per program with it.
        variants = [(1, 1, warps) for warps in (1, 2, 4, 8)]
        variants += [(8, rows, warps) for rows in (1, 2, 4, 8) for warps in (1, 2, 4, 8)]
        for align, rows, warps in variants:
            if rows * r.block < 32 * warps or rows * r.block > 16384:
                continue
            v = f"rows={rows} warps={warps} align={align}"
            grid = (triton.cdiv(m, rows),)
            kw = dict(ROWS=rows, BLOCK_N=r.block, ALIGN=align, num_warps=warps)
            measure(
                table,
                f"softmax {tag}",
                v,
                lambda: softmax_rows[grid](x, y, x.stride(0), m, n, **kw),
                r.close(ref_sm),
                io,
            )
            measure(
                table,
                f"layer_norm {tag}",
                v,
                lambda: layer_norm_rows[grid](
                    x, w, b, y, mean, rstd, x.stride(0), m, n, 1e-5, **kw
                ),
                r.close(ref_ln),
                io,
            )
            measure(
                table,
                f"rms_norm {tag}",
                v,
                lambda: rms_norm_rows[grid](x, w, y, x.stride(0), m, n, 1e-6, **kw),
                r.close(ref_rms),
                io,
            )
            if align == 8:
                measure(
                    table,
                    f"rms_norm {tag}",
                    f"rows={rows} warps={warps} N const",
                    lambda: rms_norm_rows_n[grid](
                        x,
                        w,
                        y,
                        x.stride(0),
                        m,
                        n,
                        1e-6,
                        ROWS=rows,
                        BLOCK_N=r.block,
                        num_warps=warps,
                    ),
                    r.close(ref_rms),
                    io,
                )


def rows_n_section(table: Table, device: str, shapes) -> None:
    """The row length as a constexpr (as t3's solution has it), rows per program and warps."""
    t2, t3 = load_solution("t2_softmax"), load_solution("t3_layernorm")
    for m, n in shapes:
        r = row_inputs(m, n, device)
        x, w, b, y, mean, rstd, io = r.x, r.w, r.b, r.y, r.mean, r.rstd, r.io
        ref_sm = torch.softmax(x.float(), -1)
        ref_ln = F.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
        tag = r.tag
        compile_columns(table, device, r, ("softmax", "layer_norm"))
        # the wrappers as a learner calls them (each allocates its output: free in a graph)
        measure(table, f"softmax {tag}", "solution", lambda: t2.softmax(x), nbytes=io)
        measure(table, f"layer_norm {tag}", "solution", lambda: t3.layer_norm(x, w, b), nbytes=io)
        for rows in (1, 2, 4):
            for warps in (1, 2, 4, 8):
                if rows * r.block < 32 * warps or rows * r.block > 16384:
                    continue
                grid = (triton.cdiv(m, rows),)
                kw = dict(ROWS=rows, BLOCK_N=r.block, num_warps=warps)
                v = f"N const rows={rows} warps={warps}"
                measure(
                    table,
                    f"softmax {tag}",
                    v,
                    lambda: softmax_rows_n[grid](x, y, x.stride(0), m, n, **kw),
                    r.close(ref_sm),
                    io,
                )
                for early, stats in ((False, True), (True, True), (True, False)):
                    measure(
                        table,
                        f"layer_norm {tag}",
                        v + (" early w,b" if early else "") + ("" if stats else " no stats"),
                        lambda: layer_norm_rows_n[grid](
                            x,
                            w,
                            b,
                            y,
                            mean,
                            rstd,
                            x.stride(0),
                            m,
                            n,
                            1e-5,
                            EARLY=early,
                            STATS=stats,
                            **kw,
                        ),
                        r.close(ref_ln),
                        io,
                    )


def decode_section(table: Table, device: str, t: int) -> None:
    dt = DTYPE
    f3 = load_solution("f3_fused_norm_act")
    h, inter = 4096, 14336
    x = torch.randn(t, h, device=device, dtype=dt)
    r = torch.randn(t, h, device=device, dtype=dt)
    w = torch.randn(h, device=device, dtype=dt) * 0.1 + 1
    g = torch.randn(t, 2 * inter, device=device, dtype=dt)
    out = torch.empty(t, inter, device=device, dtype=dt)
    ref = F.silu(g[:, :inter].float()) * g[:, inter:].float()
    if device == "cuda":
        e = torch.empty(1, device=device)
        measure(table, "empty launch", "triton", lambda: _empty[(1,)](e))

        def add_rms(x, r, w):
            hh = x.float() + r.float()
            r.copy_(hh.to(r.dtype))
            x.copy_(
                (hh * torch.rsqrt(hh.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)
            )

        add_rms_c = compiled(add_rms)
        silu_c = compiled(
            lambda g: (F.silu(g[:, :inter].float()) * g[:, inter:].float()).to(g.dtype)
        )
        measure(table, f"fused_add_rmsnorm t={t}", "torch.compile", lambda: add_rms_c(x, r, w))
        measure(table, f"silu_and_mul t={t}", "torch.compile", lambda: silu_c(g))
    measure(table, f"fused_add_rmsnorm t={t}", "solution", lambda: f3.fused_add_rmsnorm(x, r, w))
    measure(
        table,
        f"silu_and_mul t={t}",
        "solution",
        lambda: out.copy_(f3.silu_and_mul(g)),
        lambda: torch.allclose(out.float(), ref, atol=2e-2, rtol=2e-2),
    )
    for warps in (4, 8, 16, 32):
        measure(
            table,
            f"fused_add_rmsnorm t={t}",
            f"warps={warps}",
            lambda: f3._fused_add_rmsnorm_kernel[(t,)](
                x, r, w, x.stride(0), r.stride(0), h, 1e-6, BLOCK_SIZE=h, num_warps=warps
            ),
        )
    for block in (256, 512, 1024, 2048, 4096):
        for warps in (1, 2, 4, 8):
            if block < 32 * warps * 2:
                continue
            grid = (triton.cdiv(inter, block), t)  # the kernel's rows are on axis 1
            measure(
                table,
                f"silu_and_mul t={t}",
                f"block={block} warps={warps}",
                lambda: f3._silu_and_mul_kernel[grid](
                    g, out, g.stride(0), out.stride(0), inter, BLOCK_SIZE=block, num_warps=warps
                ),
                lambda: torch.allclose(out.float(), ref, atol=2e-2, rtol=2e-2),
            )


@dataclass
class MatmulCase:
    """One matmul shape's tensors (c the output every variant writes) and its check."""

    a: torch.Tensor
    b: torch.Tensor
    c: torch.Tensor
    tag: str
    flops: int
    ok: Callable[[], bool]


def matmul_case(
    table: Table, device: str, m1, shape, tag: str, cublas: str = "cuBLAS (torch.matmul)"
) -> MatmulCase:
    """a [M, K] @ b [K, N] in DTYPE, with cuBLAS (on a GPU) and m1's solution timed first."""
    m, n, k = shape
    a = torch.randn(m, k, device=device, dtype=DTYPE)
    b = torch.randn(k, n, device=device, dtype=DTYPE)
    c = torch.empty(m, n, device=device, dtype=DTYPE)
    ref = a.float() @ b.float()
    scale = ref.abs().max().item()
    case = MatmulCase(
        a, b, c, tag, 2 * m * n * k, lambda: (c.float() - ref).abs().max().item() <= 2e-2 * scale
    )
    if device == "cuda":
        measure(table, tag, cublas, lambda: torch.matmul(a, b, out=c), flops=case.flops)
    measure(table, tag, "solution", lambda: c.copy_(m1.matmul(a, b)), case.ok, flops=case.flops)
    return case


def matmul_section(table: Table, device: str, shapes) -> None:
    m1 = load_solution("m1_matmul")
    for m, n, k in shapes:
        case = matmul_case(table, device, m1, (m, n, k), f"matmul {m}x{n}x{k}")
        a, b, c, tag, flops, ok = case.a, case.b, case.c, case.tag, case.flops, case.ok
        if m <= 64:
            configs = [
                (16, bn, bk, w, s)
                for bn in (32, 64, 128)
                for bk in (128, 256)
                for w in (4,)
                for s in (3, 5)
            ]
        else:
            configs = [
                (128, 256, 64, 8, 3),
                (128, 256, 64, 8, 4),
                (256, 128, 64, 8, 3),
                (256, 128, 64, 8, 4),
                (128, 128, 64, 4, 4),
                (128, 128, 64, 8, 4),
                (128, 128, 128, 8, 3),
                (128, 256, 128, 8, 2),
            ]
        for bm, bn, bk, warps, stages in configs:
            grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
            args = (
                a,
                b,
                c,
                m,
                n,
                k,
                a.stride(0),
                a.stride(1),
                b.stride(0),
                b.stride(1),
                c.stride(0),
                c.stride(1),
            )
            v = f"{bm}x{bn}x{bk} w{warps} s{stages}"
            measure(
                table,
                tag,
                v + " masked",
                lambda: m1._matmul_kernel[grid](
                    *args,
                    BLOCK_M=bm,
                    BLOCK_N=bn,
                    BLOCK_K=bk,
                    GROUP_M=8,
                    INPUT_PRECISION="tf32",
                    num_warps=warps,
                    num_stages=stages,
                ),
                ok,
                flops=flops,
            )
            if m % bm == 0 and n % bn == 0 and k % bk == 0:
                measure(
                    table,
                    tag,
                    v + " even",
                    lambda: matmul_even[grid](
                        *args,
                        BLOCK_M=bm,
                        BLOCK_N=bn,
                        BLOCK_K=bk,
                        GROUP_M=8,
                        num_warps=warps,
                        num_stages=stages,
                    ),
                    ok,
                    flops=flops,
                )


def attention_section(table: Table, device: str, shapes) -> None:
    m3 = load_solution("m3_attention")
    dt = DTYPE
    original = m3._config
    for bsz, heads, seq, dim, causal in shapes:
        q, k, v = (torch.randn(bsz, heads, seq, dim, device=device, dtype=dt) for _ in range(3))
        tag = f"attention b{bsz} h{heads} s{seq} d{dim} causal={int(causal)}"
        flops = 4 * bsz * heads * seq * seq * dim * (0.5 if causal else 1.0)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        box = {}

        def ok():
            return (box["o"].float() - ref.float()).abs().max().item() < 2e-2

        if device == "cuda":
            measure(
                table,
                tag,
                "SDPA",
                lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                flops=flops,
            )
        configs = [
            None,
            (128, 64, 8, 3),
            (128, 128, 8, 2),
            (128, 128, 8, 3),
            (128, 64, 8, 4),
            (128, 64, 4, 3),
            (64, 64, 4, 3),
            (128, 32, 4, 3),
        ]
        for cfg in configs:
            m3._config = original if cfg is None else (lambda *_, cfg=cfg: m3.Config(*cfg))
            name = "solution" if cfg is None else "BM={} BN={} w{} s{}".format(*cfg)
            measure(
                table,
                tag,
                name,
                lambda: box.__setitem__("o", m3.attention(q, k, v, causal=causal)),
                ok,
                flops=flops,
            )
    m3._config = original


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="rows,rowsn,decode,matmul,attention")
    parser.add_argument("--check", action="store_true", help="small shapes, correctness only")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    device = "cpu" if args.check else "cuda"
    if args.check:
        global time_us, DTYPE
        DTYPE = torch.float32
        time_us = lambda call: 0.0  # noqa: E731 - correctness only: nothing is timed
    table = Table()
    only = set(args.only.split(","))
    if "rows" in only:
        rows_section(
            table, device, [(9, 100)] if args.check else [(4096, 1000), (4096, 2048), (4096, 4000)]
        )
    if "rowsn" in only:
        rows_n_section(table, device, [(9, 100)] if args.check else [(4096, 1000), (4096, 4000)])
    if "decode" in only:
        decode_section(table, device, 3 if args.check else 16)
    if "matmul" in only:
        matmul_section(
            table,
            device,
            [(32, 256, 256)] if args.check else [(4096, 4096, 4096), (16, 4096, 4096)],
        )
    if "attention" in only:
        attention_section(
            table,
            device,
            [(1, 2, 128, 64, True)]
            if args.check
            else [
                (4, 32, 4096, 128, False),
                (4, 32, 4096, 128, True),
                (4, 32, 1024, 128, False),
                (4, 32, 1024, 128, True),
            ],
        )
    wrong = [r for r in table.rows if r["note"].startswith(("WRONG", "failed"))]
    if args.out:
        path = Path(args.out) / "ref-sweep.json"
        path.write_text(
            json.dumps(
                {
                    "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
                    "torch": torch.__version__,
                    "triton": triton.__version__,
                    "rows": table.rows,
                },
                indent=1,
            )
        )
    print(f"{len(table.rows)} rows, {len(wrong)} wrong or failed")
    return 1 if args.check and wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
