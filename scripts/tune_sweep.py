#!/usr/bin/env python3
"""Sweep num_warps for the reference kernels at the bench shapes, and time a several-rows-per-
program RMSNorm for short rows (the lesson's "going faster" idea). GPU only; prints a table.

    python scripts/tune_sweep.py [--out DIR]

Kernels are launched directly (not through the wrappers) so that only the launch parameters
change. Times: triton.testing.do_bench median, L2 cleared before each call.
"""

# ruff: noqa: B023 - each lambda is timed at once, inside the loop that defines it
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parents[1]


def load_solution(name: str):
    """A reference solution as a module (drills/solutions/<name>.py)."""
    return load_module(ROOT / "drills" / "solutions" / f"{name}.py")


def load_module(path: Path):
    """The Python file at `path` as a module named after it."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def save_json(folder: str | None, name: str, data) -> None:
    """A probe's result as <folder>/<name> (the folder made if need be); nothing without one."""
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, name).write_text(json.dumps(data, indent=2))


def in_turn(op, shape: dict, dtype: str, sides: dict) -> list[dict]:
    """Each side's GPU time per call at `shape` (a bench recipe's op, its inputs on the GPU),
    every side's CUDA graph replayed in turn after the clock has settled and its inputs rotated
    past the L2 (tutor.bench.timing.graphs_us), and its largest difference from torch eager.
    One row per side, in the order given: shape, side, graph_us, max_diff, error; a side whose
    graph failed has graph_us None and says why."""
    from tutor.bench.recipe import clone_inputs
    from tutor.bench.timing import graph_input_sets, graphs_us, l2_bytes

    base = op.inputs(shape, dtype, "cuda")
    want = _first_result(op, base, op.eager(*base))
    count = graph_input_sets(op.bytes_moved(shape, dtype), l2_bytes())
    sets = [clone_inputs(base) for _ in range(count)]
    times, failed = graphs_us(
        {name: (lambda k, fn=fn: fn(*sets[k % count])) for name, fn in sides.items()}
    )
    rows = []
    for name, fn in sides.items():
        us = times.get(name)
        diff = float((_first_result(op, base, fn(*base)) - want).abs().max()) if us else None
        error = str(failed.get(name, ""))[:200] or None
        rows.append(
            {"shape": shape, "side": name, "graph_us": us, "max_diff": diff, "error": error}
        )
    return rows


def _first_result(op, inputs, returned):
    """The first tensor the recipe compares (layer_norm's y, not its statistics), in fp32."""
    return op.results(inputs, returned)[0].float()


def add_bandwidth(rows: list[dict], nbytes: int) -> None:
    """Each timed row's `gb_s`: `nbytes` moved per call over its GPU time (None if it failed)."""
    for row in rows:
        us = row["graph_us"]
        row["gb_s"] = nbytes / us / 1e3 if us else None


def print_rows(label: str, rows: list[dict], figures) -> None:
    """One line a row: `label`, the side, `figures(row)` (its time and rate) and its largest
    difference from eager, or "failed"."""
    for row in rows:
        shown = f"{figures(row)}  max diff {row['max_diff']:.1e}" if row["graph_us"] else "failed"
        print(f"{label} {row['side']:<28} {shown}", flush=True)


def sm_count(t: torch.Tensor, on_cpu: int = 2) -> int:
    """The SMs of `t`'s GPU; `on_cpu` on the interpreter, so persistent loops still loop."""
    if t.is_cuda:
        return torch.cuda.get_device_properties(t.device).multi_processor_count
    return on_cpu


def probe_main(argv, doc: str, check, measure, json_name: str, check_help: str) -> int:
    """A probe's command line: `--check` runs `check()` on the CPU (its exit code); otherwise,
    on a GPU, `measure()` gives the rows saved as `json_name` under `--out`, with the card and
    torch beside them."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--check", action="store_true", help=check_help)
    args = parser.parse_args(argv)
    if args.check:
        return check()
    if not torch.cuda.is_available():
        script = json_name.removesuffix(".json").replace("-", "_")
        print(f"{script}.py times kernels on a GPU; torch sees none", file=sys.stderr)
        return 2
    rows = measure()
    device = torch.cuda.get_device_name(0)
    save_json(args.out, json_name, {"device": device, "torch": torch.__version__, "rows": rows})
    return 0


@triton.jit
def _rms_norm_rows_kernel(
    x_ptr, w_ptr, y_ptr, row_stride, n_rows, n_cols, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr
):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offsets = rows[:, None] * row_stride + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    t3, t2, f3 = (
        load_solution("t3_layernorm"),
        load_solution("t2_softmax"),
        load_solution("f3_fused_norm_act"),
    )
    bf16, dev = torch.bfloat16, "cuda"
    rows_out = []

    def record(case, variant, ms, nbytes):
        us = ms * 1e3  # do_bench answers in milliseconds
        gbps = nbytes / us / 1e3
        rows_out.append(
            {"case": case, "variant": variant, "us": round(us, 2), "gbps": round(gbps, 0)}
        )
        print(f"{case:<34} {variant:<22} {us:8.2f} µs {gbps:7.0f} GB/s", flush=True)

    for n in (1000, 8192):
        m = 4096
        x = torch.randn(m, n, device=dev, dtype=bf16)
        w = torch.randn(n, device=dev, dtype=bf16)
        b = torch.randn(n, device=dev, dtype=bf16)
        y = torch.empty_like(x)
        mean = torch.empty(m, device=dev, dtype=torch.float32)
        rstd = torch.empty_like(mean)
        block = triton.next_power_of_2(n)
        for warps in (1, 2, 4, 8, 16, 32):
            if block // (32 * warps) < 1:
                continue
            us = do_bench(
                lambda: t3._layer_norm_fwd_kernel[(m,)](
                    x,
                    w,
                    b,
                    y,
                    mean,
                    rstd,
                    x.stride(0),
                    y.stride(0),
                    n,
                    1e-5,
                    BLOCK_N=block,
                    num_warps=warps,
                ),
                return_mode="median",
            )
            record(f"layer_norm {m}x{n}", f"warps={warps}", us, 2 * m * n * 2 + 2 * n * 2 + 8 * m)
            us = do_bench(
                lambda: t3._rms_norm_fwd_kernel[(m,)](
                    x, w, y, x.stride(0), y.stride(0), n, 1e-6, BLOCK_N=block, num_warps=warps
                ),
                return_mode="median",
            )
            record(f"rms_norm {m}x{n}", f"warps={warps}", us, 2 * m * n * 2 + n * 2)
            us = do_bench(
                lambda: t2._softmax_kernel[(m,)](
                    x, y, x.stride(0), y.stride(0), n, BLOCK_N=block, num_warps=warps
                ),
                return_mode="median",
            )
            record(f"softmax {m}x{n}", f"warps={warps}", us, 2 * m * n * 2)
        if n == 1000:
            for rows in (2, 4, 8, 16):
                for warps in (4, 8, 16):
                    us = do_bench(
                        lambda: _rms_norm_rows_kernel[(triton.cdiv(m, rows),)](
                            x,
                            w,
                            y,
                            x.stride(0),
                            m,
                            n,
                            1e-6,
                            ROWS=rows,
                            BLOCK_N=block,
                            num_warps=warps,
                        ),
                        return_mode="median",
                    )
                    record(
                        f"rms_norm {m}x{n}", f"rows={rows} warps={warps}", us, 2 * m * n * 2 + n * 2
                    )

    h = 4096
    for t in (16, 4096, 16384):
        copies = [
            (torch.randn(t, h, device=dev, dtype=bf16), torch.randn(t, h, device=dev, dtype=bf16))
            for _ in range(4)
        ]
        w = torch.randn(h, device=dev, dtype=bf16)
        for warps in (4, 8, 16, 32):
            state = {"i": 0}

            def call():
                xx, rr = copies[state["i"] % 4]
                state["i"] += 1
                f3._fused_add_rmsnorm_kernel[(t,)](
                    xx, rr, w, xx.stride(0), rr.stride(0), h, 1e-6, BLOCK_SIZE=h, num_warps=warps
                )

            us = do_bench(call, return_mode="median")
            record(f"fused_add_rmsnorm t={t}", f"warps={warps}", us, 4 * t * h * 2 + h * 2)

    inter = 14336
    for t in (16, 4096):
        x = torch.randn(t, 2 * inter, device=dev, dtype=bf16)
        out = torch.empty(t, inter, device=dev, dtype=bf16)
        for block in (1024, 2048, 4096):
            for warps in (4, 8, 16):
                grid = (triton.cdiv(inter, block), t)  # the kernel's rows are on axis 1
                us = do_bench(
                    lambda: f3._silu_and_mul_kernel[grid](
                        x, out, x.stride(0), out.stride(0), inter, BLOCK_SIZE=block, num_warps=warps
                    ),
                    return_mode="median",
                )
                record(f"silu_and_mul t={t}", f"block={block} warps={warps}", us, 3 * t * inter * 2)
    if args.out:
        Path(args.out, "tune_sweep.json").write_text(json.dumps(rows_out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
