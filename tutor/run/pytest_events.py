"""A pytest plugin that streams one JSON line per test to a file or pipe, for the tutor's runner.

    python -m pytest drills/tests/test_t3_layernorm.py -p tutor.run.pytest_events \
        --tutor-events /dev/fd/5 --impl mine

Events (each a JSON object on its own line, flushed at once):
  {"event": "session_start", "backend": ..., "device_name": ..., "torch": ..., "triton": ...}
  {"event": "collected", "ids": [...]}   (the tests to run, in order, before the first starts)
  {"event": "test_start", "id": ...}
  {"event": "test", "id", "outcome", "diagnosis", "message", "details", "line", "duration",
   "where", "error_map", "facts"}   (where: one sentence; error_map: text lines; facts: the
                            numbers behind them for the hint texts; "" / [] / {} unless a
                            value comparison failed)
  {"event": "collect_error", "message": ...}
  {"event": "session_end", "exitstatus": ...}
A test's outcome is passed, failed or skipped; an error in set-up or tear-down counts as failed.

With `--tutor-events-key FD` (the tutor always gives it) each line is sealed with the key waiting
in the pipe FD, which is read and closed before the first event, so before any learner code runs
(tutor.run.seal says why); without it the lines are plain JSON.
"""

from __future__ import annotations

import json
import os
from typing import IO, Any

import pytest

from tutor.course import diagnoses as dx
from tutor.run.events import (
    Collected,
    CollectFailed,
    SessionEnded,
    SessionStarted,
    TestStarted,
)
from tutor.run.results import TestResult, plain_facts
from tutor.run.seal import read_key, seal
from tutor.states import Outcome

_EVENTS = pytest.StashKey["EventLog"]()
# What the session runs on (backend, device_name, torch and the kernel library's versions): the
# drill plugin (tutor.harness.drill_plugin) sets it when its kernel language picks the backend.
SESSION_FACTS = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("tutor").addoption(
        "--tutor-events",
        metavar="PATH",
        default=None,
        help="write one JSON line per test to PATH (a file or /dev/fd/N)",
    )
    parser.getgroup("tutor").addoption(
        "--tutor-events-key",
        metavar="FD",
        type=int,
        default=None,
        help="seal every line with the key read from the pipe FD (tutor.run.seal)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--tutor-events")
    if path and not hasattr(config, "workerinput"):  # xdist workers report through the controller
        stream = open(path, "w", buffering=1, encoding="utf-8")  # noqa: SIM115
        log = EventLog(stream, config.getoption("--tutor-events-key"))
        config.stash[_EVENTS] = log
        config.pluginmanager.register(log, "tutor-events")


def pytest_unconfigure(config: pytest.Config) -> None:
    log = config.stash.get(_EVENTS, None)
    if log is not None:
        log.close()
        config.pluginmanager.unregister(log)
        del config.stash[_EVENTS]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Attach the diagnosis of a DrillFailure (or of any other error) to the report."""
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None:
        return
    error = call.excinfo.value
    diagnosis = getattr(error, "diagnosis", None)
    if diagnosis is not None:
        found = TestResult(
            report.nodeid,
            Outcome.FAILED,
            diagnosis,
            error.message,
            error.details,
            error.line,
            where=getattr(error, "where", ""),
            error_map=list(getattr(error, "error_map", ())),
            facts=plain_facts(getattr(error, "facts", None)),
        )
    elif not call.excinfo.errisinstance(pytest.skip.Exception):
        text = str(error).strip().splitlines()
        found = TestResult(
            report.nodeid,
            Outcome.FAILED,
            dx.MISMATCH if isinstance(error, AssertionError) else None,
            f"{type(error).__name__}: {text[0] if text else ''}",
        )
    else:
        return
    # As a plain dict: under xdist the report travels from the worker as JSON.
    report.tutor = found.to_event()


class EventLog:
    """Writes the events; registered as a plugin only when --tutor-events is given."""

    def __init__(self, stream: IO[str], key_fd: int | None = None) -> None:
        self.stream = stream
        self.results: dict[str, TestResult] = {}
        self.pid = os.getpid()
        # Read at the first event, after the backend is chosen: a warm run that must start again
        # cold (tutor.run.zygote.restart_cold) does so before it, and finds the key still waiting.
        self.key_fd = key_fd
        self.key: bytes | None = None

    def write(self, event: dict[str, Any]) -> None:
        if os.getpid() != self.pid:
            return  # the learner's code forked: only the test process reports
        if self.key_fd is not None:
            self.key, self.key_fd = read_key(self.key_fd), None
        line = json.dumps(event)
        if self.key is not None:
            line = seal(self.key, line.encode()).decode()
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        facts = session.config.stash.get(SESSION_FACTS, {})
        self.write(
            SessionStarted(
                facts.get("backend"),
                facts.get("device_name"),
                facts.get("torch"),
                facts.get("triton"),
            ).to_event()
        )

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Before any test sets up, so before the learner's file is imported (tutor.run.trust).
        self.write(Collected(tuple(item.nodeid for item in session.items)).to_event())

    def pytest_runtest_logstart(self, nodeid: str, location: tuple) -> None:
        self.write(TestStarted(nodeid).to_event())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # One event per test: the first failing phase wins, else the call phase's outcome; the
        # duration is the three phases' together.
        entry = self.results.get(report.nodeid)
        so_far = entry.duration if entry is not None else 0.0
        if entry is None or (entry.outcome == Outcome.PASSED and report.outcome != Outcome.PASSED):
            info = getattr(report, "tutor", None)
            outcome = Outcome.SKIPPED if report.skipped else Outcome(report.outcome)
            entry = TestResult.from_event(info) if info else TestResult(report.nodeid, outcome)
            entry.outcome = outcome
            self.results[report.nodeid] = entry
        entry.duration = round(so_far + report.duration, 4)
        if report.when == "teardown":
            self.write(self.results.pop(report.nodeid).to_event())

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.write(CollectFailed(report.nodeid, str(report.longrepr)[-2000:]).to_event())

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.write(SessionEnded(int(exitstatus)).to_event())
