"""Which tests a drill has: pytest's --collect-only in a child process, for naming the tests a
timed-out or crashed run never reached. Torch is imported by the child, never here; the child
runs under the supervisor, like every child the tutor starts, on the runs' host (tutor.run.host)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from tutor.course.catalogue import Catalogue
from tutor.run.host import LOCAL
from tutor.run.supervisor import EXITED

COLLECT_TIMEOUT_S = 90.0


def test_ids(
    catalogue: Catalogue,
    drill_id: str,
    impl: str = "mine",
    *,
    force_cpu: bool = False,
    python: str = sys.executable,
    timeout: float = COLLECT_TIMEOUT_S,
    host=LOCAL,
) -> list[str] | None:
    """The node ids of the drill's tests, in order; None when they cannot be collected."""
    drill = catalogue.drill(drill_id)
    paths = catalogue.paths
    command = [
        python,
        "-m",
        "pytest",
        str(paths.test_file(drill.file)),
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--impl={paths.resolve_impl(drill.file, impl)}",
        f"--rootdir={paths.root}",
    ]
    if force_cpu:
        command.append("--cpu")
    output = bytearray()
    ended = host.supervise(
        command,
        cwd=Path(paths.root),
        env=dict(os.environ),
        timeout=timeout,
        on_output=output.extend,
    )
    if ended.how != EXITED:
        return None
    text = output.decode("utf-8", "replace")
    ids = [line.strip() for line in text.splitlines() if "::" in line]
    return ids or None


def lister(
    catalogue: Catalogue, *, force_cpu: bool = False, host=LOCAL
) -> Callable[[str, str], list[str] | None]:
    """`test_ids` for this catalogue, backend and host, as a check takes it (tutor.coach.check)."""
    return lambda drill_id, impl: test_ids(
        catalogue, drill_id, impl, force_cpu=force_cpu, host=host
    )
