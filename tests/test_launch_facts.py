"""The compile facts the perf coach reads from a kernel's PTX and Triton IR, on what Triton
compiles here.

Triton compiles for a CUDA target without a GPU (the PTX and the cubin need only the compiler
it ships), so what a fact counts is checked against what Triton really emits for a kernel
written with tl.exp and the same kernel written with tl.exp2, or for matmuls tiled in different
ways, not against hand-written PTX.
"""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from tutor.bench.rules import dot_tile
from tutor.kernels.triton.facts import MMA, dot_tiles, exp_facts

try:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
except ImportError:  # pragma: no cover - a Triton without these cannot compile here
    GPUTarget = ASTSource = None

HOPPER = (90, 32)  # sm_90, 32 threads a warp: the H200 the facts were recorded on


@triton.jit
def _natural(x_ptr, y_ptr, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs) * scale
    tl.store(y_ptr + offs, tl.exp(x - tl.max(x, axis=0)))


@triton.jit
def _base_two(x_ptr, y_ptr, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs) * (scale * 1.4426950408889634)
    tl.store(y_ptr + offs, tl.exp2(x - tl.max(x, axis=0)))


@triton.jit
def _tiled_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One BM x BN tile of c = a @ b per program (row-major, sizes multiples of the tiles)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rows[:, None] * K + (k + ks)[None, :])
        y = tl.load(b + (k + ks)[:, None] * N + cols[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rows[:, None] * N + cols[None, :], acc)


@triton.jit
def _persistent_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The same product, each program walking tiles tl.num_programs(0) apart."""
    tiles_n = N // BN
    for tile in tl.range(tl.program_id(0), (M // BM) * tiles_n, tl.num_programs(0)):
        rows = (tile // tiles_n) * BM + tl.arange(0, BM)
        cols = (tile % tiles_n) * BN + tl.arange(0, BN)
        ks = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rows[:, None] * K + (k + ks)[None, :])
            y = tl.load(b + (k + ks)[:, None] * N + cols[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(c + rows[:, None] * N + cols[None, :], acc)


@triton.jit
def _two_dots(q, k, v, o, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """Attention's two products on one block: q @ k^T (BM x BN), then p @ v (BM x D)."""
    r, c, d = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, D)
    s = tl.dot(tl.load(q + r[:, None] * D + d[None, :]), tl.load(k + d[:, None] + c[None, :] * D))
    p = tl.exp2(s - tl.max(s, axis=1)[:, None]).to(tl.bfloat16)
    tl.store(o + r[:, None] * D + d[None, :], tl.dot(p, tl.load(v + c[:, None] * D + d[None, :])))


def _asm(kernel, signature: dict[str, str], constexprs: dict[str, int], num_warps: int = 4):
    if ASTSource is None:
        pytest.skip("this Triton cannot compile ahead of time")
    source = ASTSource(fn=kernel, signature=signature, constexprs=constexprs)
    target = GPUTarget("cuda", *HOPPER)
    return triton.compile(source, target=target, options={"num_warps": num_warps}).asm


def _ptx(kernel) -> str:
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "scale": "fp32", "BLOCK": "constexpr"}
    return _asm(kernel, signature, {"BLOCK": 128}, num_warps=1)["ptx"]


MATMUL = {"a": "*bf16", "b": "*bf16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
MATMUL |= {"BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}


def test_every_exponential_of_tl_exp_keeps_denormals():
    facts = exp_facts(_ptx(_natural))
    assert facts["exp_ops"] > 0 and facts["exp_denormal"] == facts["exp_ops"]


def test_tl_exp2_flushes_denormals_in_every_exponential():
    facts = exp_facts(_ptx(_base_two))
    assert facts["exp_ops"] > 0 and facts["exp_denormal"] == 0


def test_a_kernel_without_ptx_has_no_exponential_facts():
    assert exp_facts(None) == {"exp_ops": None, "exp_denormal": None}


def test_an_elementwise_kernel_has_no_tensor_core_instruction():
    assert not MMA.search(_ptx(_natural))


@pytest.mark.parametrize("kernel", [_tiled_matmul, _persistent_matmul])
@pytest.mark.parametrize("tile", [(32, 32, 32), (128, 64, 64)])
def test_the_ir_gives_the_tile_each_dot_multiplies(kernel, tile):
    # The tile comes from the IR, not the grid: a persistent kernel's is read the same way.
    ttir = _asm(kernel, MATMUL, dict(zip(("BM", "BN", "BK"), tile, strict=True)))["ttir"]
    assert dot_tiles(ttir) == [list(tile)]


def test_attention_has_two_dots_and_its_tile_is_the_larger_output():
    signature = {"q": "*bf16", "k": "*bf16", "v": "*bf16", "o": "*fp32"}
    signature |= {"BM": "constexpr", "BN": "constexpr", "D": "constexpr"}
    ttir = _asm(_two_dots, signature, {"BM": 64, "BN": 32, "D": 128})["ttir"]
    assert dot_tiles(ttir) == [[64, 32, 128], [64, 128, 32]]
    assert dot_tile({"dot_tiles": dot_tiles(ttir)}) == [64, 128, 32]


def test_a_kernel_without_a_dot_has_no_tiles():
    assert (
        dot_tiles(
            _asm(
                _natural,
                {"x_ptr": "*fp32", "y_ptr": "*fp32", "scale": "fp32", "BLOCK": "constexpr"},
                {"BLOCK": 128},
            )["ttir"]
        )
        == []
    )
    assert dot_tiles(None) is None
