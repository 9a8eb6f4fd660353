#!/usr/bin/env python3
"""What closes m1's last few percent to cuBLAS at 4096^3 bf16 (issue 27), and does the same
take m2 (linear + bias + GELU) past cuBLAS followed by torch.compile's GELU?

    python scripts/probe_matmul_persistent.py [--out DIR]    # GPU: a table, and JSON in DIR
    TRITON_INTERPRET=1 python scripts/probe_matmul_persistent.py --check   # CPU: the outputs

The whole report of 2026-12-06 (H100, CUDA graphs in turn in compile's process) had m1 at
200.8 µs against compile's cuBLAS call at 193.3 (1.04x); the twelfth session's probe had a
persistent, flattened descriptor kernel at 177.3 µs against 181.6 one tile a program (timed
apart, not in turn). The variants are the solution's descriptor kernel, 128 x 256 x 64 tiles on
8 warps, with one thing changed:

- `loop, a tile each`: the body inside a grid-stride loop over tiles, still one program a tile
  (m2's form: its kernel alone took 192 µs with the loop, 234 without);
- `persistent`: one program an SM, each walking the tiles; `flat` lets Triton flatten the tile
  and K loops into one pipelined loop, so the next tile's first loads are in flight while this
  tile's output is stored;
- `split store`: the output tile stored in two 128 x 128 halves, so 4 stages of inputs fit in
  shared memory beside the store's buffer;
- `ws`: the flattened loop warp-specialized (a producer warp issuing the TMA loads);
- `a tile each`: no loop at all, the solution's kernel with the split store and 4 stages.

All in CUDA graphs in turn with the solution and cuBLAS (tutor.bench.timing.graphs_us, each
round in a fresh shuffled order), inputs rotated past the L2. m1's solution took the persistent,
flattened, split-store kernel on 4 stages after the first runs (2026-12-06,
docs/reports/2026-12-06/probes-matmul-layernorm.md). m2's variants put its descriptor kernel
(then one program a tile in a grid-stride loop, stored whole on 3 stages) through the same
changes, beside torch eager (cuBLAS, then GELU) and torch.compile, its yardstick; on 4 stages
the kernel asks 229,408 bytes of shared memory (Triton 3.9 for sm_90), just inside an H100's.
m2's solution took the same form after the next run (docs/reports/2026-12-06/
probes-flat-attention-m2.md), so its `solution` row is now the last variant's kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from probe_tma import _tile_of, linear_gelu_probe  # noqa: E402 - scripts is on the path
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from tune_sweep import in_turn, load_solution, print_rows, probe_main, sm_count  # noqa: E402

from tutor.bench.recipe import load_recipes  # noqa: E402

DTYPE = "bfloat16"
SHAPE = {"m": 4096, "n": 4096, "k": 4096}
TILE = (128, 256, 64)  # the solution's descriptor tiles


@triton.jit
def _one_tile(
    a_desc, b_desc, c_desc, tile, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_STORE: tl.constexpr,
):  # fmt: skip
    """Tile number `tile` of c, K-looped as the solution's descriptor kernel."""
    pid_m, pid_n = _tile_of(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    if SPLIT_STORE:
        halves = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], halves[0].to(c_desc.dtype))
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], halves[1].to(c_desc.dtype))
    else:
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def _matmul_walk(
    a_desc, b_desc, c_desc, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    LOOP: tl.constexpr, FLATTEN: tl.constexpr, SPLIT_STORE: tl.constexpr, WS: tl.constexpr,
):  # fmt: skip
    """Tiles pid, pid + programs, ... of c (LOOP), or tile pid alone."""
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    if LOOP:
        for tile in tl.range(
            tl.program_id(0), tiles, tl.num_programs(0), flatten=FLATTEN, warp_specialize=WS
        ):
            _one_tile(
                a_desc, b_desc, c_desc, tile, M, N, K,
                BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_STORE,
            )  # fmt: skip
    else:
        _one_tile(
            a_desc, b_desc, c_desc, tl.program_id(0), M, N, K,
            BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_STORE,
        )  # fmt: skip


def walk(per_sm: int | None, flatten=False, split=False, ws=False, stages=3, loop=True):
    """A matmul by _matmul_walk: `per_sm` programs an SM, or None for one program a tile."""
    bm, bn, bk = TILE

    def call(a, b):
        (m, k), n = a.shape, b.shape[1]
        c = torch.empty((m, n), dtype=a.dtype, device=a.device)
        store_n = bn // 2 if split else bn
        tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        programs = tiles if per_sm is None else min(tiles, per_sm * sm_count(a))
        _matmul_walk[(programs,)](
            TensorDescriptor.from_tensor(a, [bm, bk]),
            TensorDescriptor.from_tensor(b, [bk, bn]),
            TensorDescriptor.from_tensor(c, [bm, store_n]),
            m, n, k,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
            LOOP=loop, FLATTEN=flatten, SPLIT_STORE=split, WS=ws, num_warps=8,
            num_stages=stages,
        )  # fmt: skip
        return c

    return call


# m2 (linear + bias + GELU) on the same tiles, by probe_tma.py's linear_gelu_probe (its
# epilogue in the solution's form).
def walk_linear_gelu(per_sm: int | None, flatten=False, split=False, stages=3):
    """m2 by linear_gelu_probe: `per_sm` programs an SM, or None for one program a tile."""
    bm, bn, bk = TILE

    def call(x, w, b):
        (m, k), n = x.shape, w.shape[0]
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        programs = tiles if per_sm is None else min(tiles, per_sm * sm_count(x))
        linear_gelu_probe[(programs,)](
            TensorDescriptor.from_tensor(x, [bm, bk]),
            TensorDescriptor.from_tensor(w, [bn, bk]),
            b,
            TensorDescriptor.from_tensor(y, [bm, bn // 2 if split else bn]),
            m, n, k,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, PROGRAMS=programs,
            FLATTEN=flatten, TANH_APPROX=False, SUBTILE=split, GRID_STRIDE=True,
            num_warps=8, num_stages=stages,
        )  # fmt: skip
        return y

    return call


LINEAR_GELU_VARIANTS = {
    "loop, a tile each, split store s4": walk_linear_gelu(None, split=True, stages=4),
    "persistent flat s3": walk_linear_gelu(1, flatten=True),
    "persistent flat split store s3": walk_linear_gelu(1, flatten=True, split=True),
    "persistent flat split store s4": walk_linear_gelu(1, flatten=True, split=True, stages=4),
}

VARIANTS = {
    "a tile each, split store s4": walk(None, split=True, stages=4, loop=False),
    "loop, a tile each s3": walk(None),
    "loop, a tile each, split store s4": walk(None, split=True, stages=4),
    "persistent split store s4": walk(1, split=True, stages=4),
    "persistent s3": walk(1),
    "persistent flat s3": walk(1, flatten=True),
    "persistent flat split store s3": walk(1, flatten=True, split=True),
    "persistent flat split store s4": walk(1, flatten=True, split=True, stages=4),
    "persistent flat ws s3": walk(1, flatten=True, ws=True),
}


def measure() -> list[dict]:
    rows = []
    for drill, function, sides in (
        ("m1", "matmul", {"solution": load_solution("m1_matmul").matmul, "cuBLAS": torch.matmul}),
        ("m2", "linear_gelu", {"solution": load_solution("m2_linear_act").linear_gelu}),
    ):
        op = load_recipes(ROOT / "drills" / "bench" / f"{drill}.py")[function]
        if drill == "m2":
            sides |= {"cuBLAS + GELU": op.eager, "torch.compile": torch.compile(op.eager)}
        variants = VARIANTS if drill == "m1" else LINEAR_GELU_VARIANTS
        found = in_turn(op, SHAPE, DTYPE, sides | variants)
        flops = op.flops(SHAPE)
        for row in found:
            row["function"] = function
            row["tflops"] = flops / row["graph_us"] / 1e6 if row["graph_us"] else None
        print_rows(
            f"{function} 4096^3",
            found,
            lambda row: f"{row['graph_us']:7.2f} µs {row['tflops']:5.0f} TFLOP/s",
        )
        rows += found
    return rows


def check() -> int:
    # Sizes off the tiles' multiples, so edge tiles and the K tail are covered. fp16: the bare
    # interpreter (no tutor harness here) multiplies bf16 tiles as raw 16-bit integers.
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(200, 72, generator=gen).to(torch.float16)
    b = torch.randn(72, 264, generator=gen).to(torch.float16)
    want = (a.float() @ b.float()).to(torch.float16).float()
    ok = True
    for name, call in VARIANTS.items():
        if "ws" in name:
            continue  # warp specialization is a GPU schedule; the interpreter runs it the same
        diff = float((call(a, b).float() - want).abs().max())
        print(f"{name:<34} max diff {diff:.2e}")
        ok &= diff < 0.1
    w, bias = torch.randn(264, 72, generator=gen).half(), torch.randn(264, generator=gen).half()
    v = a.float() @ w.float().T + bias.float()
    want = torch.nn.functional.gelu(v, approximate="tanh").half().float()
    for name, call in LINEAR_GELU_VARIANTS.items():
        diff = float((call(a, w, bias).float() - want).abs().max())
        print(f"linear_gelu {name:<34} max diff {diff:.2e}")
        ok &= diff < 0.1
    print("the variants compute a @ b and linear_gelu" if ok else "a variant is wrong")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv,
        __doc__,
        check,
        measure,
        "probe-matmul-persistent.json",
        "the variants' outputs, CPU",
    )


if __name__ == "__main__":
    raise SystemExit(main())
