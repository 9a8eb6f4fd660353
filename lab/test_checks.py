"""The lab's probes still compute what they time: each module whose docstring offers `--check`
runs it on the CPU interpreter and must exit 0. Run by hand (`python -m pytest lab`), not by
CI: the product's tests are in tests/.

A probe is run once a session on a GPU, against the solutions as they are then; when a solution
changes (its kernel's grid axes, its `_config`'s signature), a probe that launches the kernel
itself can go stale unseen until that costly call. ref_sweep had both: its silu_and_mul sweep
launched rows on the wrong grid axis (a segfault on the interpreter) and its attention sweep
stubbed `_config` with the old signature.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parent
ROOT = LAB.parent
OFFERS_CHECK = re.compile(r"python -m lab\.\w+[^\n]*--check")


def _probes() -> list[str]:
    return sorted(
        f"lab.{path.stem}"
        for path in LAB.glob("*.py")
        if OFFERS_CHECK.search(path.read_text(encoding="utf-8"))
    )


def test_the_probes_are_found():
    assert "lab.ref_sweep" in _probes()


@pytest.mark.parametrize("module", _probes())
def test_a_probes_variants_compute_what_they_claim(module: str):
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-m", module, "--check"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,  # `python -m lab.<name>` finds the lab from the repository root
        timeout=600,
    )
    tail = (done.stdout + done.stderr)[-1500:]
    assert done.returncode == 0, f"{module} --check exited {done.returncode}:\n{tail}"
