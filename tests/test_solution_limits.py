"""Reference solutions at the limits the drill tests do not reach: shapes past a grid axis's
65535 programs, the block sizes chosen for rows longer than any test's, m3's 128 x 128
tiles with and without a masked tail (the drill tests have no non-causal D = 128 input in
contiguous 16-bit tensors), and the persistent descriptor paths of m1 and m2.

A kernel runs in a child process with TRITON_INTERPRET=1 (Triton must be imported that way
for its own jit functions to be interpreted; see tests/test_interpreter.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from solution_modules import SOLUTIONS, load_solution

ROOT = Path(__file__).resolve().parents[1]


def test_cross_entropy_splits_only_rows_that_would_fit_one_block():
    """f5: a row that fits one block of MAX_BLOCK_V goes in two (two programs share an SM,
    measured faster at V = 32000); longer rows use MAX_BLOCK_V itself (faster at 128256)."""
    f5 = load_solution("f5_cross_entropy")
    widest = f5.MAX_BLOCK_V
    assert f5._block_v(32000) == widest // 2
    assert f5._block_v(widest) == widest // 2
    assert f5._block_v(widest + 1) == widest
    assert f5._block_v(128256) == widest
    assert f5._block_v(3001) == 2048
    assert f5._num_warps(f5._block_v(32000)) == 16


LAUNCHES = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("solution", sys.argv[1])
solution = importlib.util.module_from_spec(spec)
spec.loader.exec_module(solution)
grids = []


class Launches:  # a kernel as the wrapper sees it, noting each grid
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        grids.append(tuple(grid))
        return self.kernel[grid]
"""


def run_with_launches(script: str, solution: str, timeout: int) -> str:
    """What `script` prints, run after LAUNCHES on the interpreter with the solution file
    `solution` loaded as `solution`."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHES + script, str(SOLUTIONS / solution)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    return done.stdout.strip() or done.stderr[-2000:]


SLICES = """
f3 = solution
f3.MAX_GRID_ROWS = 3  # as if axis 1 held 3 programs: 7 rows go in slices of 3, 3 and 1
f3._silu_and_mul_kernel = Launches(f3._silu_and_mul_kernel)
x = torch.randn(7, 2 * 40)
want = torch.nn.functional.silu(x[:, :40]) * x[:, 40:]
got = f3.silu_and_mul(x)
right = torch.allclose(got, want, atol=1e-5)
print("ok" if right and [g[1] for g in grids] == [3, 3, 1] else f"wrong: {grids}, {right}")
"""


def test_silu_and_mul_covers_more_rows_than_a_grid_axis_holds():
    """f3: rows sit on grid axis 1 (at most 65535 programs), so longer inputs are launched in
    slices of rows; every row of every slice is written right."""
    assert run_with_launches(SLICES, "f3_fused_norm_act.py", timeout=120) == "ok"


TAILS = """
m3 = solution
m3._attn_fwd_kernel = Launches(m3._attn_fwd_kernel)
torch.manual_seed(0)
wrong = []
for seq_len in (300, 256):  # a partial last key block, and none
    q, k, v = (torch.randn(1, 2, seq_len, 128, dtype=torch.float16) for _ in range(3))
    got = m3.attention(q, k, v).float()
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    if not torch.allclose(got, want, atol=2e-3):
        wrong.append((seq_len, float((got - want).abs().max())))
print("ok" if not wrong and grids == [(3, 2), (2, 2)] else f"wrong: {grids}, {wrong}")
"""


def test_attention_is_right_with_and_without_a_partial_key_block():
    """m3: non-causal D = 128 on the descriptor path takes 128 x 128 tiles, and compiles its
    masked key loop only when S is not a multiple of 128: 2 heads x 3 query blocks at S = 300
    (the last key block partial) and 2 heads x 2 whole blocks at S = 256 (no masked loop), all
    right."""
    assert run_with_launches(TAILS, "m3_attention.py", timeout=300) == "ok"


WALK = """
def walk(call):
    # 3 x 3 tiles of 128 x 256 with edge tiles and a K tail, and one tile: 2 programs, then 1.
    # fp16: the bare interpreter (no tutor harness) multiplies bf16 tiles as raw integers.
    torch.manual_seed(0)
    wrong = []
    for m, k, n in ((300, 72, 520), (100, 64, 200)):
        got, want = call(m, k, n)
        if not torch.allclose(got, want, atol=0.05, rtol=0.01):
            wrong.append(((m, k, n), float((got - want).abs().max())))
    print("ok" if not wrong and grids == [(2,), (1,)] else f"wrong: {grids}, {wrong}")
"""

WALKS = """
m1 = solution
m1._matmul_tma_kernel = Launches(m1._matmul_tma_kernel)


def matmul(m, k, n):
    a, b = torch.randn(m, k, dtype=torch.float16), torch.randn(k, n, dtype=torch.float16)
    return m1.matmul(a, b).float(), a.float() @ b.float()


walk(matmul)
"""


def test_matmul_descriptor_programs_each_walk_several_tiles():
    """m1: the descriptor path is persistent, one program an SM (2 on the interpreter): at
    300 x 520 its 2 programs walk 9 tiles of 128 x 256, edge tiles and a partial K block
    among them, and store each tile in two halves, all right; a single tile takes 1 program.
    The drill tests never reach this path (their bf16 rows are not 16-byte aligned)."""
    assert run_with_launches(WALK + WALKS, "m1_matmul.py", timeout=300) == "ok"


LINEAR_WALKS = """
import torch.nn.functional as F
m2 = solution
m2._linear_gelu_tma_kernel = Launches(m2._linear_gelu_tma_kernel)


def linear_gelu(m, k, n):
    x, w = torch.randn(m, k, dtype=torch.float16), torch.randn(n, k, dtype=torch.float16)
    b = torch.randn(n, dtype=torch.float16)  # a bias per column: each half must take its own
    want = F.gelu(F.linear(x.float(), w.float(), b.float()), approximate="tanh")
    return m2.linear_gelu(x, w, b).float(), want


walk(linear_gelu)
"""


def test_linear_gelu_descriptor_programs_each_walk_several_tiles():
    """m2: as m1's, with the epilogue: 2 programs walk 9 tiles of 128 x 256 at 300 x 520 (edge
    tiles and a partial K block among them), each half of a tile adds its own columns' bias
    before GELU and is stored at its own columns, all right; a single tile takes 1 program."""
    assert run_with_launches(WALK + LINEAR_WALKS, "m2_linear_act.py", timeout=300) == "ok"
