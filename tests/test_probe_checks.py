"""The GPU probes of scripts/ still compute what they time: each one whose docstring offers
`--check` runs it on the CPU interpreter and must exit 0.

A probe is run once a session on a GPU, against the solutions as they are then; when a solution
changes (its kernel's grid axes, its `_config`'s signature), a probe that launches the kernel
itself can go stale unseen until that costly call. scripts/ref_sweep.py had both: its
silu_and_mul sweep launched rows on the wrong grid axis (a segfault on the interpreter) and its
attention sweep stubbed `_config` with the old signature.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OFFERS_CHECK = re.compile(r"python scripts/\w+\.py[^\n]*--check")
NEEDS = {"probe_liger": "liger_kernel"}  # a probe of another library, skipped without it


def _probes() -> list[Path]:
    return sorted(
        path
        for path in (ROOT / "scripts").glob("*.py")
        if OFFERS_CHECK.search(path.read_text(encoding="utf-8"))
    )


def test_the_probes_are_found():
    names = {path.stem for path in _probes()}
    assert {"probe_attention_tiles", "probe_matmul_persistent", "ref_sweep"} <= names


@pytest.mark.parametrize("script", _probes(), ids=lambda path: path.stem)
def test_a_probes_variants_compute_what_they_claim(script: Path):
    needed = NEEDS.get(script.stem)
    if needed:
        pytest.importorskip(needed)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script), "--check"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    tail = (done.stdout + done.stderr)[-1500:]
    assert done.returncode == 0, f"{script.name} --check exited {done.returncode}:\n{tail}"
