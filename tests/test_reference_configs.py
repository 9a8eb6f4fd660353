"""The reference solutions' launch choices that only a GPU would otherwise catch.

The CPU interpreter ignores num_warps and warp specialization, so a config that Triton cannot
compile on a GPU passes every CPU test. These rules were measured on an H200 with Triton 3.6
(docs/gpu-verification.md): warp specialization failed to compile on 4 warps, and gained
nothing for causal attention.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def m3():
    path = ROOT / "drills" / "solutions" / "m3_attention.py"
    spec = importlib.util.spec_from_file_location("m3_reference_configs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_m3_warp_specializes_only_long_non_causal_rows_on_8_warps_of_a_hopper_gpu(m3):
    chosen = []
    for head_dim, itemsize, seq_len, causal, descriptors, hopper in itertools.product(
        (16, 32, 64, 128), (2, 4), (64, 1024, 1025, 4096), (False, True), (False, True), (0, 1)
    ):
        config = m3._config(head_dim, itemsize, seq_len, causal, descriptors, bool(hopper))
        if config.warp_specialize:
            chosen.append((head_dim, itemsize, seq_len, causal, descriptors, hopper))
            assert config.num_warps >= 8  # Triton 3.6: "PassManager::run failed" on 4 warps
    assert chosen == [
        (128, 2, seq, False, True, 1) for seq in (1025, 4096)
    ]  # 16-bit descriptors, S > 1024, D = 128, not causal, Hopper only


def test_m3_asks_for_hopper_only_on_a_gpu_of_compute_capability_9_or_more(m3, monkeypatch):
    torch = pytest.importorskip("torch")
    assert not m3._is_hopper_or_newer(torch.device("cpu"))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    assert not m3._is_hopper_or_newer(torch.device("cuda", 0))  # an A100
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    assert m3._is_hopper_or_newer(torch.device("cuda", 0))
