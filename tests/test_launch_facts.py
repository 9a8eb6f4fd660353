"""The compile facts the perf coach reads from a kernel's PTX, on PTX Triton compiles here.

Triton compiles for a CUDA target without a GPU (the PTX and the cubin need only the compiler
it ships), so what a fact counts is checked against what Triton really emits for a kernel
written with tl.exp and the same kernel written with tl.exp2, not against hand-written PTX.
"""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from tutor.bench.facts import MMA, exp_facts

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


def _ptx(kernel) -> str:
    if ASTSource is None:
        pytest.skip("this Triton cannot compile ahead of time")
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "scale": "fp32", "BLOCK": "constexpr"}
    source = ASTSource(fn=kernel, signature=signature, constexprs={"BLOCK": 128})
    compiled = triton.compile(source, target=GPUTarget("cuda", *HOPPER), options={"num_warps": 1})
    return compiled.asm["ptx"]


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
