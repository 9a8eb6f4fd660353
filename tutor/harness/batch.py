"""Run one drill's tests on several files in one process, a pytest session per file.

    python -m tutor.harness.batch --deadline=SECONDS --each=SECONDS FILE [FILE ...] -- PYTEST_ARGS

For the course's own files only (`tutor dev check` on the CPU interpreter, tutor.dev.check):
proving a drill runs its tests on the solution, the starter and every known-buggy kernel, and a
process for each file costs more than most of their tests (two forks of a process holding torch,
pytest's start-up, the tutor's supervision: about 0.1 s of CPU a file, 40 s for the course).
Here each file gets the session a single run gives it (the same PYTEST_ARGS, then `--impl=FILE`),
one after the other, in the process the runner started (tutor.run.runner.Runner.run_batch).

Before each session a sealed `batch_file` event names the file (tutor.run.events.BatchFile), so the
runner knows which events are whose. The events key (tutor.run.seal) is read once and handed to
each session through a pipe of its own, as the tutor hands it to a single run. The run's guard
(tutor.run.child_guard) is installed once for the whole batch; what a session leaves running is
ended before the next. A session that runs past `--each` seconds (a single run's time limit)
ends the batch, as does a file whose session kills the process: the runner runs that file and
the rest one by one, as it runs a learner's file, which names a hang or a crash.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import pytest

from tutor.run import child_guard
from tutor.run.events import BatchFile
from tutor.run.seal import key_pipe, read_key, seal

KEY_OPTION = "--tutor-events-key="
EVENTS_OPTION = "--tutor-events="


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutor.harness.batch")
    parser.add_argument("--deadline", type=float, required=True)
    parser.add_argument("--each", type=float, required=True)
    parser.add_argument("files", nargs="+")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    session_args = argv[split + 1 :]
    child_guard.install(args.deadline)
    started = [time.monotonic()]
    threading.Thread(target=_watch, args=(started, args.each), daemon=True).start()
    key_at = _index(session_args, KEY_OPTION)
    key = read_key(int(session_args[key_at].removeprefix(KEY_OPTION)))
    events_path = session_args[_index(session_args, EVENTS_OPTION)].removeprefix(EVENTS_OPTION)
    worst = 0
    with open(events_path, "w", buffering=1, encoding="utf-8") as events:
        for file in args.files:
            line = json.dumps(BatchFile(file).to_event()).encode()
            events.write(seal(key, line).decode() + "\n")
            session_args[key_at] = f"{KEY_OPTION}{key_pipe(key)}"
            started[0] = time.monotonic()
            worst = max(worst, int(pytest.main([*session_args, f"--impl={file}"])))
            child_guard.end_descendants()
    sys.stdout.flush()
    sys.stderr.flush()
    return worst


def _watch(started: list[float], each: float) -> None:
    """End the batch when the session running now has run for `each` seconds."""
    while True:
        time.sleep(min(1.0, each))
        if time.monotonic() - started[0] > each:
            child_guard.end_everything()


def _index(args: list[str], option: str) -> int:
    return next(i for i, arg in enumerate(args) if arg.startswith(option))


if __name__ == "__main__":
    # As a single run's guard ends it when its session is over: a thread a file left running
    # must not hold the process at Python's exit.
    os._exit(main(sys.argv[1:]))
