"""The app starts fast: importing it loads neither torch nor triton, and it is up in a second."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

FIXTURE_COURSE = Path(__file__).resolve().parent / "fixtures" / "course"

_START = """
import asyncio, sys, time
started = time.monotonic()
from tutor.catalogue import load_catalogue
from tutor.paths import CoursePaths
from tutor.progress import ProgressStore
from tutor.ui.app import TutorApp

async def main():
    paths = CoursePaths(__import__("pathlib").Path(sys.argv[1]))
    app = TutorApp(load_catalogue(paths), ProgressStore(paths.progress_file), force_cpu=True,
                   watch=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        print(f"{time.monotonic() - started:.3f}")
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "triton", "numpy"})
    print(" ".join(heavy) or "none")

asyncio.run(main())
"""


def test_the_app_starts_without_torch_and_quickly(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE_COURSE, course)
    begun = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _START, str(course)], capture_output=True,
                          text=True, timeout=60, check=True)
    wall = time.monotonic() - begun
    seconds, heavy = done.stdout.split()
    assert heavy == "none"
    # Up in about half a second on an idle machine; the bound leaves room for a loaded CI box.
    assert float(seconds) < 3.0, f"the app took {seconds} s to start ({wall:.1f} s with Python)"
