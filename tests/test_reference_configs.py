"""The reference solutions' launch choices that only a GPU would otherwise catch.

The CPU interpreter ignores num_warps, num_stages and shared memory, so a config that a GPU
cannot launch passes every CPU test. These rules were measured on an H100 and an H200 with
Triton 3.6 (docs/gpu-verification.md).
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOPPER_SHARED_MEMORY = 232448  # bytes a program may use on an H100 / H200 (Triton's limit)


@pytest.fixture(scope="module")
def m3():
    path = ROOT / "drills" / "solutions" / "m3_attention.py"
    spec = importlib.util.spec_from_file_location("m3_reference_configs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_m3_tiles_fit_in_a_hopper_sms_shared_memory(m3):
    for head_dim, itemsize, seq_len, causal, descriptors in itertools.product(
        (16, 32, 64, 128), (2, 4), (64, 1024, 1025, 4096), (False, True), (False, True)
    ):
        config = m3._config(head_dim, itemsize, seq_len, causal, descriptors)
        q_tile = config.block_m * head_dim * itemsize
        kv_tiles = 2 * config.block_n * head_dim * itemsize  # one k and one v tile per stage
        assert q_tile + config.num_stages * kv_tiles <= HOPPER_SHARED_MEMORY, config


def test_m3_long_rows_take_128_by_128_tiles_on_8_warps(m3):
    # Measured: 1885 against 2152 us at S = 4096 on 128 x 64 (H100); 4 warps would hold the
    # 128 x 128 fp32 accumulator in 128 registers a thread.
    for causal in (False, True):
        assert tuple(m3._config(128, 2, 4096, causal, True)) == (128, 128, 8, 3)
