"""Reference solutions at the limits the drill tests do not reach: shapes past a grid axis's
65535 programs, and the block sizes chosen for rows longer than any test's.

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


SLICES = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("f3", sys.argv[1])
f3 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(f3)
f3.MAX_GRID_ROWS = 3  # as if axis 1 held 3 programs: 7 rows go in slices of 3, 3 and 1
kernel, grids = f3._silu_and_mul_kernel, []


class Launches:  # the kernel as the wrapper sees it, noting each grid
    def __getitem__(self, grid):
        grids.append(tuple(grid))
        return kernel[grid]


f3._silu_and_mul_kernel = Launches()
x = torch.randn(7, 2 * 40)
want = torch.nn.functional.silu(x[:, :40]) * x[:, 40:]
got = f3.silu_and_mul(x)
right = torch.allclose(got, want, atol=1e-5)
print("ok" if right and [g[1] for g in grids] == [3, 3, 1] else f"wrong: {grids}, {right}")
"""


def test_silu_and_mul_covers_more_rows_than_a_grid_axis_holds():
    """f3: rows sit on grid axis 1 (at most 65535 programs), so longer inputs are launched in
    slices of rows; every row of every slice is written right."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SLICES, str(SOLUTIONS / "f3_fused_norm_act.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.stdout.strip() == "ok", done.stdout + done.stderr[-2000:]
