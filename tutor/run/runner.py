"""Run a drill's tests in a child pytest process and collect a RunResult.

The learner's code never runs in the tutor's process: the child is started by the one
supervisor (tutor.run.supervisor: under a keeper, in its own process group, killed at the time limit
or when the caller cancels), streams one sealed JSON event per test through a pipe
(`tutor.run.pytest_events`), and each event is decoded (tutor.run.events), folded into the
RunResult and passed to `on_event` as it arrives, so a UI can show progress live.

A warm run whose keeper is lost (it went with the warm process, or the learner's code killed it)
runs again cold, and the result says so; a cold run whose keeper is lost or stopped was ended by
the learner's code signalling its parent (`signals-parent`).
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from collections.abc import Callable

from tutor import kernels
from tutor.course import diagnoses as dx
from tutor.course.catalogue import Catalogue
from tutor.kernels.base import KernelFailure
from tutor.lang import i18n
from tutor.lang.i18n import _
from tutor.run import agreement
from tutor.run import results as r
from tutor.run.events import BatchFile, Event, Fold, decode
from tutor.run.host import LOCAL
from tutor.run.supervisor import (
    CANCELLED,
    COULD_NOT_START,
    EVENTS_KEY,
    EVENTS_PATH,
    OUT_OF_MEMORY,
    PARENT_KILLED,
    PARENT_STOPPED,
    STARTUP_TIMEOUT_S,
    TIMED_OUT,
    Ended,
)
from tutor.states import Outcome, RunStatus

DEFAULT_TIMEOUT_S = 120.0  # the CPU interpreter plus a first JIT compile fit well inside this
CHILD_GRACE_S = 30.0  # the child's own deadline comes this long after the tutor's
OUTPUT_TAIL = 6000
TORCH_THREADS = "1"  # torch's intra-op threads in a run's child (see Runner.run)

EventCallback = Callable[[Event], None]


class Runner:
    """Runs drills of one catalogue; one `run` call per run, safe to use from a worker thread."""

    def __init__(
        self,
        catalogue: Catalogue,
        *,
        force_cpu: bool = False,
        timeout: float = DEFAULT_TIMEOUT_S,
        python: str = sys.executable,
        memory_limit: int | None = None,
        warm=None,
        host=LOCAL,
    ) -> None:
        """`host` is where the runs start (tutor.run.host: this machine, or one over ssh)."""
        self.catalogue = catalogue
        self.force_cpu = force_cpu
        self.timeout = timeout
        self.python = python
        self.host = host
        self.memory_limit = host.memory_limit() if memory_limit is None else memory_limit
        # The warm process (tutor.run.warm.WarmPool) serves the GPU as well as the CPU: it never
        # starts CUDA, so each forked run starts its own. It serves one backend: a run for the
        # other one goes cold. A remote host keeps its own (tutor.remote).
        warm = host.warm if warm is None else warm
        self.warm = warm if warm is not None and warm.cpu == self.runs_on_cpu else None

    @property
    def runs_on_cpu(self) -> bool:
        """Whether this runner's kernels go to the CPU interpreter (asked for, or no GPU)."""
        return self.host.runs_on_cpu(self.force_cpu)

    def command(self, drill_id: str, impl: str, events_path: str) -> list[str]:
        """`python -m pytest ...`: the drill's tests on `impl`, in a child of its own."""
        return [
            self.python,
            "-m",
            "pytest",
            *self._session_args(drill_id, events_path),
            "-p",
            "tutor.run.child_guard",
            # The child ends itself too, should the tutor die before it can end the run.
            f"--tutor-deadline={self._deadline(1):.0f}",
            f"--impl={impl}",
        ]

    def batch_command(self, drill_id: str, impls: list[str], events_path: str) -> list[str]:
        """`python -m tutor.harness.batch ...`: the drill's tests on each of `impls`, a session
        for each, in one child (its guard installed once, for the whole batch)."""
        return [
            self.python,
            "-m",
            "tutor.harness.batch",
            f"--deadline={self._deadline(len(impls)):.0f}",
            f"--each={self.timeout:.0f}",
            *impls,
            "--",
            *self._session_args(drill_id, events_path),
        ]

    def _deadline(self, files: int) -> float:
        return STARTUP_TIMEOUT_S + files * self.timeout + CHILD_GRACE_S

    def _session_args(self, drill_id: str, events_path: str) -> list[str]:
        """The pytest arguments of a session of the drill's tests, but the file under test."""
        drill = self.catalogue.drill(drill_id)
        paths = self.catalogue.paths
        args = [
            str(paths.test_file(drill.file)),
            "-p",
            "tutor.run.pytest_events",
            f"--tutor-events={events_path}",
            f"--tutor-events-key={EVENTS_KEY}",
            # What the file must define: the child need not read drills.yaml again.
            f"--impl-functions={','.join(drill.functions)}",
            f"--impl-torch-core={','.join(drill.torch_core)}",
            f"--kernel-language={drill.language}",
            "-q",
            "--no-header",
            "-rN",
            # pytest's own tracebacks parse the source of every frame they show: 0.3 s of CPU
            # for a failing run of 15 tests, which the tutor reports from its events anyway.
            # Python's own format keeps a whole traceback in the output for crashes.
            "--tb=native",
            "-p",
            "no:cacheprovider",
            # Its clean-up runs gc.collect() several times at the end of every session: 0.17 s
            # of a warm run's 0.4 s with torch's heap to walk, for warnings no learner reads.
            "-p",
            "no:unraisableexception",
            f"--rootdir={paths.root}",
        ]
        if self.force_cpu:
            args.append("--cpu")
        return args

    def run(
        self,
        drill_id: str,
        impl: str = "mine",
        *,
        on_event: EventCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> r.RunResult:
        drill = self.catalogue.drill(drill_id)
        paths = self.catalogue.paths
        impl_path = paths.resolve_impl(drill.file, impl)
        result = r.RunResult(drill=drill_id, impl=str(impl_path), status=RunStatus.SETUP_ERROR)
        if not paths.test_file(drill.file).is_file():
            result.message = f"{paths.test_file(drill.file)} does not exist"
            return result
        refused = _not_a_source_file(impl_path) or self.host.cannot_run()
        if refused:
            result.message = refused
            if not impl_path.exists():
                result.diagnoses = [dx.MISSING_FILE]
            return result
        syntax = kernels.language(drill.language).syntax_failure(impl_path)
        if syntax is not None:  # said at once: no test can run a file that does not compile
            return _not_compiled(result, syntax, paths.test_file(drill.file).name)
        started = time.monotonic()
        env = self._child_env()
        command = self.command(drill_id, str(impl_path), EVENTS_PATH)
        note = ""
        for warm in (self.warm, None):
            collector = _Collector(
                r.RunResult(drill_id, str(impl_path), RunStatus.SETUP_ERROR), on_event
            )
            ended = self.host.supervise(
                command,
                cwd=paths.root,
                env=env,
                timeout=self.timeout,
                cancel=cancel,
                on_output=collector.feed_output,
                on_events=collector.feed_event,
                memory_limit=self.memory_limit,
                warm=warm,
            )
            if not (ended.warm and ended.how == PARENT_KILLED):
                break
            note = WARM_RUN_LOST  # its result is not to be trusted: the same run, cold
        result = collector.fold.result
        result.warm = ended.warm
        result.duration = round(time.monotonic() - started, 2)
        if ended.how == COULD_NOT_START:
            result.message = ended.error
            return result
        collector.finish(ended, self.timeout, self.memory_limit)
        result.message = "; ".join(m for m in (note, result.message) if m)
        return result

    def run_batch(
        self, drill_id: str, impls: list[str], cancel: threading.Event | None = None
    ) -> dict[str, r.RunResult]:
        """The drill's tests on each of `impls`, the course's own files (tutor dev check), in
        one child, a session for each (tutor.harness.batch), forked from the warm process when
        there is one. The result has the files whose session ran to its end; the others (the
        child died, the batch ran past its limits or `cancel` was set) are left for `run`, one
        by one."""
        paths = self.catalogue.paths
        sessions: list[tuple[str, Fold, float]] = []  # each file's, with when it began
        current: list[Fold] = []

        def feed_event(line: bytes) -> None:
            event = decode(line)
            if isinstance(event, BatchFile):
                current[:] = [Fold(r.RunResult(drill_id, event.impl, RunStatus.SETUP_ERROR))]
                sessions.append((event.impl, current[0], time.monotonic()))
            elif event is not None and current:
                current[0].apply(event)

        ended = self.host.supervise(
            self.batch_command(drill_id, impls, EVENTS_PATH),
            cwd=paths.root,
            env=self._child_env(),
            timeout=self.timeout * len(impls),
            cancel=cancel,
            on_events=feed_event,
            memory_limit=self.memory_limit,
            warm=self.warm,
        )
        results = {}
        ends = [began for _, _, began in sessions[1:]] + [time.monotonic()]
        for (impl, fold, start), end in zip(sessions, ends, strict=True):
            # a session lasts until the next one begins
            if fold.exitstatus is not None and impl in impls:
                settle(fold, fold.exitstatus)
                fold.result.warm = ended.warm
                fold.result.duration = round(end - start, 2)
                results[impl] = fold.result
        return results

    def _child_env(self) -> dict[str, str]:
        """The environment of a run's child."""
        env = dict(
            os.environ,
            PYTHONUNBUFFERED="1",
            PYTHONDONTWRITEBYTECODE="1",
            # No entry-point plugins: a drill's tests need only the tutor's own, named with -p,
            # and loading every installed pytest plugin costs start-up time on every run.
            PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
            # One torch thread: the tests' tensors are small and the interpreter is Python, so
            # more threads win nothing, while on a busy machine (the app, an editor, parallel
            # runs) OpenMP's waiting threads made the same run 3-8x slower (2.6 s vs 7.5-21 s).
            OMP_NUM_THREADS=TORCH_THREADS,
            **self.catalogue.paths.kernel_cache_env(),
            **i18n.child_env(),  # the sentences the tests write, in the learner's language
        )
        env.pop("TRITON_INTERPRET", None)  # the child decides, from --cpu and the hardware
        return env


def _not_compiled(result: r.RunResult, failure: KernelFailure, test_file: str) -> r.RunResult:
    """The run of a file with a syntax error, without a child: one failed check that names
    the line, as every test would have."""
    result.status = RunStatus.FAILED
    result.tests = [
        r.TestResult(
            f"{test_file}::syntax",
            Outcome.FAILED,
            failure.diagnosis,
            failure.message,
            failure.details,
            failure.line,
        )
    ]
    result.diagnoses = [failure.diagnosis]
    return result


WARM_RUN_LOST = (
    "the tutor's warm process lost this run (it, or the run's keeper, was killed), so it ran "
    "again from a cold start"
)


def _not_a_source_file(path) -> str:
    """Why `path` cannot be the file under test ("" when it can): it must be a regular file of
    text (a FIFO would block the run's import for ever; a binary file is no Python source)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"{path} does not exist"
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror})"
    if stat.S_ISDIR(mode):
        return f"{path} is a directory, not a Python file"
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        return f"{path} is {kind}: the file under test must be a Python source file"
    try:
        with path.open("rb") as source:
            head = source.read(1 << 16)
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror})"
    nul = head.find(b"\0")
    if nul >= 0:
        return (
            f"{path} is a binary file (a NUL byte at byte {nul}): the file under test must be "
            "Python source"
        )
    return ""


class _Collector:
    """Folds the event stream into the RunResult, forwards each event, keeps the output tail."""

    def __init__(self, result: r.RunResult, on_event: EventCallback | None) -> None:
        self.fold = Fold(result)
        self.on_event = on_event
        self.output = bytearray()

    def feed_output(self, chunk: bytes) -> None:
        self.output += chunk
        del self.output[: max(0, len(self.output) - 4 * OUTPUT_TAIL)]

    def feed_event(self, line: bytes) -> None:
        """One event line (its seal checked by the supervisor)."""
        event = decode(line)
        if event is None:
            return
        self.fold.apply(event)
        if self.on_event is not None:
            self.on_event(event)

    def finish(self, ended: Ended, timeout: float, memory_limit: int) -> None:
        fold, result = self.fold, self.fold.result
        returncode = ended.returncode
        result.output = self.output.decode("utf-8", "replace")[-OUTPUT_TAIL:]
        found = _failed_tests_diagnoses(result)
        hung = fold.running.split("::")[-1] if fold.running else None
        if ended.how == CANCELLED:
            result.status, result.message = RunStatus.CANCELLED, "replaced by a newer run"
        elif fold.ledger.broken:  # whatever else it did, what it reported is not to be shown
            distrust(result, fold.ledger.broken)
            return
        elif ended.how == TIMED_OUT and ended.timed == "start-up":
            result.status = RunStatus.TIMEOUT
            result.message = (
                f"the tests did not start within {STARTUP_TIMEOUT_S:.0f} s: importing your file "
                "(or torch and triton) hangs, or the machine is very busy"
            )
            found.append(dx.KERNEL_HANG)
        elif ended.how == TIMED_OUT:
            result.status = RunStatus.TIMEOUT
            result.message = (
                f"killed after {timeout:.0f} s"
                + (f" while running {hung}" if hung else "")
                + ": a kernel that never finishes, or a very slow one"
            )
            found.append(dx.KERNEL_HANG)
        elif ended.how == OUT_OF_MEMORY:
            result.status = RunStatus.OUT_OF_MEMORY
            result.message = (
                f"stopped when the run held {ended.peak_rss / 2**30:.1f} GiB of memory, past its "
                f"limit of {memory_limit / 2**30:.1f} GiB"
                + (f", while running {hung}" if hung else "")
                + ": something allocates far more than the test's tensors need "
                "(set TUTOR_MEMORY_LIMIT_MB to change the limit)"
            )
            found.append(dx.OUT_OF_MEMORY)
        elif ended.how in (PARENT_KILLED, PARENT_STOPPED):
            result.status = RunStatus.CRASHED
            did = "killed" if ended.how == PARENT_KILLED else "stopped (SIGSTOP)"
            result.message = (
                f"your code {did} the process that runs it, its parent (os.getppid())"
                + (f", while running {hung}" if hung else "")
                + ": the tests were ended there"
            )
            found.append(dx.SIGNALS_PARENT)
        elif returncode < 0 or (
            not fold.session_ended and (returncode != 0 or result.tests or fold.running)
        ):
            # Without the session's last event even an exit code of 0 is no pass: the process
            # ended (os._exit in the learner's code) before its tests did.
            result.status = RunStatus.CRASHED
            result.message = f"the test process died ({ended.description})" + (
                f" while running {hung}" if hung else ""
            )
            found.append(dx.PROCESS_CRASHED)
        else:
            settle(fold, returncode)
            return
        result.diagnoses = dx.most_specific_first(found)


def settle(fold: Fold, returncode: int) -> None:
    """The status and diagnoses of a session that ran to its end with pytest's `returncode`."""
    result = fold.result
    untrusted = fold.ledger.verdict(returncode)
    if untrusted:
        distrust(result, untrusted)
    elif fold.collect_errors:
        result.status = RunStatus.COLLECTION_ERROR
        result.message = "the drill's test file could not be collected:\n" + fold.collect_errors[0]
    elif returncode == 0 and result.tests:
        result.status = RunStatus.PASSED
    elif returncode == 1 and result.tests:
        result.status = RunStatus.FAILED
    else:
        result.status = RunStatus.SETUP_ERROR
        result.message = f"pytest exited with code {returncode} and ran no test"
    agreement.withdraw_unborne_claims(result.tests)
    result.diagnoses = dx.most_specific_first(_failed_tests_diagnoses(result))


def distrust(result: r.RunResult, why: str) -> None:
    """Make `result` a run that could not be trusted: none of the results it reported, and
    `why` (tutor.run.trust) in its message."""
    result.status = RunStatus.UNTRUSTED
    result.tests, result.diagnoses = [], []
    result.message = _(
        "the test results could not be trusted ({why}): results must come from the drill's "
        "tests as they run, not from code that writes them itself. Nothing was recorded."
    ).format(why=why)


def _failed_tests_diagnoses(result: r.RunResult) -> list[str]:
    """The diagnoses the failed tests named, in the order they ran."""
    return [t.diagnosis for t in result.tests if t.failed and t.diagnosis]
