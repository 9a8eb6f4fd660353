"""lab/ptxas_check.py reads ptxas's verbose log as Triton prints it, and matches a launch's
compile facts to the compile they came from (the H200's numbers of 2026-12-02 as data)."""

from __future__ import annotations

from lab import ptxas_check

# t4's reference and its spilling mutant compiled in one bench process: two kernels, the
# second compiled twice (a shape of its own), with ptxas's other lines around them.
LOG = """[bench] t4 case 0
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_softmax_online_kernel' for 'sm_90a'
ptxas info    : Function properties for _softmax_online_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers, 396 bytes cmem[0]
ptxas info    : Compiling entry function '_softmax_one_pass_kernel' for 'sm_90a'
ptxas info    : Function properties for _softmax_one_pass_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 396 bytes cmem[0]
ptxas info    : Function properties for _softmax_one_pass_kernel
    216 bytes stack frame, 268 bytes spill stores, 268 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 396 bytes cmem[0]
"""


def test_each_compile_of_a_kernel_is_read():
    found = ptxas_check.ptxas_functions(LOG)
    assert found["_softmax_online_kernel"] == [{"stack_frame": 0, "spill_stores": 0, "regs": 64}]
    assert [c["regs"] for c in found["_softmax_one_pass_kernel"]] == [40, 255]
    assert found["_softmax_one_pass_kernel"][1]["stack_frame"] == 216


def test_a_launch_matches_the_compile_with_its_registers_and_local_memory():
    (_, spilled) = ptxas_check.ptxas_functions(LOG)["_softmax_one_pass_kernel"]
    assert ptxas_check._same({"n_regs": 255, "n_spills": 54}, spilled)  # 54 words = 216 bytes
    assert not ptxas_check._same({"n_regs": 255, "n_spills": 216}, spilled)  # bytes: not words
    assert not ptxas_check._same({"n_regs": 254, "n_spills": 54}, spilled)
    assert not ptxas_check._same({"n_regs": 255, "n_spills": None}, spilled)
