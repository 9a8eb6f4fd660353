"""Nothing the learner does can hurt the tutor or lose their work: real processes, signals, files.

However a run ends (its tests finish, a hang is killed, the tutor gets SIGTERM, SIGHUP, SIGINT
or SIGKILL), no process of it is left; a run past its memory limit ends with its own status;
the tutor's writes never follow a symbolic link; broken files are one line with exit code 2.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psutil
import pytest
from cli_helpers import tutor

from tutor.course import diagnoses as dx
from tutor.course.catalogue import load_catalogue
from tutor.course.progress import ProgressStore
from tutor.run.runner import Runner
from tutor.run.trust import Ledger
from tutor.states import RunStatus

# A T3 learner file whose layer_norm starts two processes that would outlive a careless run
# (one in the run's group, one in a session of its own), writes a flag, then spins forever.
SPAWNS_AND_HANGS = """
import subprocess, time
from pathlib import Path

def layer_norm(x, weight, bias, eps=1e-5):
    subprocess.Popen(["sleep", "{mark}"])
    subprocess.Popen(["sleep", "{mark}"], start_new_session=True)
    Path("{flag}").write_text("running")
    while {hang}:
        time.sleep(0.05)
    raise NotImplementedError("TODO")

def rms_norm(x, weight, eps=1e-6):
    raise NotImplementedError("TODO")
"""


def _learner(tmp_path: Path, *, hang: bool) -> tuple[Path, str, Path]:
    mark = f"{600 + uuid.uuid4().int % 10_000}.{uuid.uuid4().int % 1000}"  # unique sleep time
    flag = tmp_path / f"running-{uuid.uuid4().hex}"
    path = tmp_path / "learner.py"
    path.write_text(SPAWNS_AND_HANGS.format(mark=mark, flag=flag, hang=hang))
    return path, mark, flag


def _sleepers(mark: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if process.info["cmdline"] == ["sleep", mark]:
            found.append(process)
    return found


def _gone_within(check, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not check():
            return True
        time.sleep(0.1)
    return not check()


def _wait_for(path: Path, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, "the learner's code never started"
        time.sleep(0.1)


def test_processes_the_learner_leaves_behind_end_with_the_run(course, tmp_path):
    path, mark, _ = _learner(tmp_path, hang=False)
    result = Runner(load_catalogue(course), force_cpu=True).run("t3", str(path))
    assert result.status == RunStatus.FAILED and result.diagnoses[0] == dx.NOT_WRITTEN
    assert _gone_within(lambda: _sleepers(mark)), "a process the learner started outlived the run"


def test_a_hang_is_ended_with_everything_it_started(course, tmp_path):
    path, mark, _ = _learner(tmp_path, hang=True)
    result = Runner(load_catalogue(course), force_cpu=True, timeout=5).run("t3", str(path))
    assert result.status == RunStatus.TIMEOUT and "killed after 5 s while running" in result.message
    assert _gone_within(lambda: _sleepers(mark))


def _run_processes(course: Path, mark: str) -> list[psutil.Process]:
    """The tutor's test child (its command names the course) and the learner's sleepers."""
    found = _sleepers(mark)
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "pytest" in cmdline and any(str(course) in part for part in cmdline):
            found.append(process)
    return found


@pytest.mark.parametrize(
    ("signum", "code", "words"),
    [
        (signal.SIGINT, 130, "interrupted (Ctrl-C)"),
        (signal.SIGTERM, 128 + signal.SIGTERM, "stopped by SIGTERM"),
        (signal.SIGHUP, 128 + signal.SIGHUP, "stopped by SIGHUP"),
        (signal.SIGKILL, -signal.SIGKILL, None),
    ],
    ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGKILL"],
)
def test_however_the_tutor_ends_no_process_of_its_run_is_left(
    course, tmp_path, signum, code, words
):
    path, mark, flag = _learner(tmp_path, hang=True)
    tutor = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tutor",
            "--root",
            str(course.root),
            "check",
            "t3",
            "--impl",
            str(path),
            "--cpu",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # Started with Ctrl-C ignored, as a background job of a script is (and as a test
        # worker's children were after some earlier test): one Ctrl-C must still end it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        _wait_for(flag)
        assert _run_processes(course.root, mark), "the run's processes should be up by now"
        tutor.send_signal(signum)  # one signal: a first Ctrl-C must be enough
        # The tutor's own end first, then the run's processes, then its words: a process of
        # the run left holding the tutor's pipes would otherwise read as a tutor that hung.
        try:
            tutor.wait(timeout=90)
        except subprocess.TimeoutExpired:
            left = [p.info for p in _run_processes(course.root, mark)]
            pytest.fail(f"the tutor did not end after {signum!r}; the run's processes: {left}")
        assert _gone_within(lambda: _run_processes(course.root, mark)), [
            p.info for p in _run_processes(course.root, mark)
        ]
        _, err = tutor.communicate(timeout=30)
    finally:
        if tutor.poll() is None:
            tutor.kill()
    assert tutor.returncode == code
    if words:
        assert words in err and "Traceback" not in err


def test_dev_check_stopped_mid_batch_ends_at_once_with_every_process_of_its_runs(course, tmp_path):
    """`tutor dev check` runs a drill's files in a child of a worker thread (a batch on the
    CPU): SIGTERM in the middle of a hanging file ends the tutor and the batch at once, not
    when the file's time limit (120 s) would have."""
    path, mark, flag = _learner(tmp_path, hang=True)
    hanging = course.mutants("t3") / f"{dx.KERNEL_HANG}__spawns_and_spins.py"
    hanging.write_text(path.read_text())
    tutor = subprocess.Popen(
        [sys.executable, "-m", "tutor", "--root", str(course.root), "dev", "check", "t3", "--cpu"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for(flag)
        tutor.send_signal(signal.SIGTERM)
        try:
            tutor.wait(timeout=30)  # a fraction of the file's own limit
        except subprocess.TimeoutExpired:
            pytest.fail("tutor dev check waited for its runs after SIGTERM")
        assert _gone_within(lambda: _sleepers(mark)), [p.info for p in _sleepers(mark)]
        _, err = tutor.communicate(timeout=30)
    finally:
        if tutor.poll() is None:
            tutor.kill()
    assert tutor.returncode == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in err and "Traceback" not in err


EATS_MEMORY = """
import time, torch

def layer_norm(x, weight, bias, eps=1e-5):
    hoard = torch.ones(6 * 2**30 // 4)  # 6 GiB, touched
    time.sleep(60)
    return hoard

def rms_norm(x, weight, eps=1e-6):
    raise NotImplementedError("TODO")
"""


def test_a_run_past_its_memory_limit_ends_as_out_of_memory(course, tmp_path):
    path = tmp_path / "hoard.py"
    path.write_text(EATS_MEMORY)
    runner = Runner(load_catalogue(course), force_cpu=True, memory_limit=2 * 2**30)
    result = runner.run("t3", str(path))
    assert result.status == RunStatus.OUT_OF_MEMORY
    assert result.diagnoses == [dx.OUT_OF_MEMORY]
    assert (
        "past its limit of 2.0 GiB" in result.message and "TUTOR_MEMORY_LIMIT_MB" in result.message
    )


def test_the_tutor_never_writes_through_a_symbolic_link(course, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("# somebody else's file\n")
    mine = course.mine("t3_layernorm.py")
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.symlink_to(outside)
    for args in (("reset", "t3"), ("check", "t3", "--cpu")):
        out = tutor(course, *args)
        assert out.returncode == 2 and "is a symbolic link" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
    assert outside.read_text() == "# somebody else's file\n"
    dangling = tmp_path / "nowhere" / "t1.py"
    course.mine("t1_gelu.py").symlink_to(dangling)
    out = tutor(course, "check", "t1", "--cpu")
    assert out.returncode == 2 and "is a symbolic link" in out.stderr
    assert not dangling.exists() and not dangling.parent.exists()


def test_a_folder_where_the_learner_file_should_be_is_named(course):
    course.mine("t1_gelu.py").mkdir(parents=True)
    out = tutor(course, "check", "t1", "--cpu")
    assert out.returncode == 2 and "is a directory" in out.stderr and "Traceback" not in out.stderr


def test_a_missing_starter_is_named(course):
    course.starter("t1_gelu.py").unlink()
    for args in (("check", "t1", "--cpu"), ("reset", "t1")):
        out = tutor(course, *args)
        assert out.returncode == 2 and "no starter for t1" in out.stderr, out.stderr


def test_a_broken_hints_file_is_found_before_the_run(course):
    course.hints("t3").write_text("format: 1\ndiagnoses:\n  x: [unclosed\n")
    out = tutor(course, "check", "t3", "--cpu")
    assert out.returncode == 2 and "hints/t3.yaml:" in out.stderr, out.stderr
    assert "not valid YAML" in out.stderr and "Traceback" not in out.stderr
    assert not course.progress_file.exists()  # nothing ran, nothing recorded


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf", "soon"])
def test_a_time_limit_must_be_a_positive_number(course, value):
    out = tutor(course, "check", "t3", "--timeout", value)
    assert out.returncode == 2 and "--timeout" in out.stderr


def test_a_file_under_test_that_is_not_python_is_named(course, tmp_path):
    text = tmp_path / "kernel.txt"
    text.write_text("def gelu_tanh(x): ...\n")
    out = tutor(course, "check", "t1", "--impl", str(text), "--cpu")
    assert out.returncode == 2 and "is not a .py file" in out.stderr


def test_sys_exit_at_import_is_named(course, tmp_path):
    path = tmp_path / "exits.py"
    path.write_text("import sys\nsys.exit(0)\n")
    result = Runner(load_catalogue(course), force_cpu=True).run("t1", str(path))
    assert result.status == RunStatus.FAILED and result.diagnoses == [dx.IMPORT_ERROR]
    assert "called sys.exit(0)" in result.tests[0].message


def test_a_fork_does_not_report_every_test_twice(course, tmp_path):
    path = tmp_path / "forks.py"
    path.write_text(
        textwrap.dedent("""
        import os

        def gelu_tanh(x):
            if not os.environ.get("FORKED"):  # once: both processes go on running the tests
                os.environ["FORKED"] = "1"
                os.fork()
            raise NotImplementedError("TODO")
    """)
    )
    result = Runner(load_catalogue(course), force_cpu=True).run("t1", str(path))
    ids = [t.id for t in result.tests]
    assert ids and len(ids) == len(set(ids)) and result.diagnoses == [dx.NOT_WRITTEN]


def test_output_to_a_closed_pipe_is_no_traceback(course):
    done = subprocess.run(
        f"{sys.executable} -m tutor --root {course.root} list | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr and done.stdout.strip()


INCREMENT = """
import sys
from pathlib import Path
from tutor.course.progress import ProgressStore
store = ProgressStore(Path(sys.argv[1]))
with store.update():
    store.drill("t1").runs += 1
"""


def test_concurrent_updates_keep_every_change(tmp_path):
    path = tmp_path / ".tutor" / "progress.json"
    workers = [subprocess.Popen([sys.executable, "-c", INCREMENT, str(path)]) for _ in range(10)]
    assert all(w.wait(timeout=120) == 0 for w in workers)
    assert ProgressStore(path).drill("t1").runs == 10


def test_corrupt_progress_files_are_set_aside_without_overwriting_each_other(tmp_path):
    path = tmp_path / ".tutor" / "progress.json"
    path.parent.mkdir()
    for text in ("{not json", json.dumps({"schema": 1, "drills": {"t1": {"runs": "many"}}})):
        path.write_text(text)
        assert "moved to" in (ProgressStore(path).warning or "")
    asides = sorted(p.read_text() for p in path.parent.glob("progress.json.corrupt-*"))
    assert len(asides) == 2 and "{not json" in asides


def test_an_unreadable_progress_file_is_reported_not_moved(course):
    course.progress_file.mkdir(parents=True)  # a folder where the file should be
    out = tutor(course, "progress")
    assert out.returncode == 2 and "cannot be read" in out.stderr
    assert course.progress_file.is_dir() and not list(course.state_dir.glob("*.corrupt-*"))


def test_a_file_name_with_a_nul_in_the_catalogue_is_named(course):
    text = course.catalogue.read_text().replace("file: t1_gelu.py", 'file: "t1\\0gelu.py"')
    course.catalogue.write_text(text)
    out = tutor(course, "list")
    assert out.returncode == 2 and "drill 't1': key 'file' must be a bare file name" in out.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="a read-only folder stops root only this way")
def test_a_read_only_state_folder_is_one_line(course, tmp_path):
    course.state_dir.mkdir()
    (course.state_dir / "progress.lock").mkdir()  # the lock cannot be opened: an OSError
    out = tutor(course, "hint", "t1")
    assert "Traceback" not in out.stderr


def test_forked_processes_are_not_counted_once_per_fork(tmp_path):
    """Eight processes sharing one 300 MB buffer copy-on-write hold about 300 MB, not 2.4 GB."""
    from tutor.run.supervisor import run_memory

    ready = tmp_path / "ready"
    script = textwrap.dedent(f"""
        import os, time
        buffer = bytearray(300 * 2**20)  # touched: resident in the first process
        for _ in range(3):
            os.fork()  # 2 ** 3 = 8 processes, all sharing the buffer's pages
        open({str(ready)!r} + str(os.getpid()), "w").close()
        time.sleep(60)
    """)
    leader = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("ready*"))) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(list(tmp_path.glob("ready*"))) == 8
        one = psutil.Process(leader.pid).memory_info().rss
        assert one > 300 * 2**20
        assert run_memory(leader.pid) < 2 * one  # summed resident sets would be about 8x
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
        leader.wait()


def test_the_supervisor_finds_every_process_below_a_run_as_psutil_does(tmp_path):
    """Forks two deep, and a child started from a thread that is not the main one (Linux lists
    it under that thread): `descendants` sees the same processes as psutil's scan of them all."""
    from tutor.run.supervisor import descendants

    ready = tmp_path / "ready"
    script = textwrap.dedent(f"""
        import os, subprocess, sys, threading, time
        def start_sleeper():  # in a thread that stays alive, so its children are its own
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            open({str(ready)!r} + "-sleeper", "w").close()
            time.sleep(60)
        leader = os.getpid()
        for _ in range(2):
            os.fork()  # 4 processes
        if os.getpid() == leader:  # threads after the forks: a fork copies no other thread
            threading.Thread(target=start_sleeper, daemon=True).start()
        open({str(ready)!r} + str(os.getpid()), "w").close()
        time.sleep(60)
    """)
    leader = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("ready*"))) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        expected = {p.pid for p in psutil.Process(leader.pid).children(recursive=True)}
        assert len(expected) == 4  # 3 forks and the sleeper
        assert {p.pid for p in descendants(leader.pid)} == expected
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
        leader.wait()


def test_a_full_disk_is_named_and_the_progress_kept(course):
    """Writes past a file-size limit fail (EFBIG) as writes to a full disk do (ENOSPC)."""
    import resource

    drill = load_catalogue(course).drill("t0")
    course.mine(drill.file).parent.mkdir(parents=True, exist_ok=True)
    course.mine(drill.file).write_text(course.solution(drill.file).read_text())
    first = tutor(course, "check", "t0", "--cpu")
    assert first.returncode == 0, first.stderr
    before = course.progress_file.read_text()

    def tiny_files() -> None:  # in the tutor's process only: no file may grow past 16 bytes
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))

    out = tutor(course, "check", "t0", "--cpu", preexec_fn=tiny_files)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "All tests pass." in out.stdout  # the verdict still shows
    assert f"{course.progress_file}: progress not saved" in out.stderr
    assert course.progress_file.read_text() == before
    assert [f.name for f in course.progress_file.parent.glob(".progress-*")] == []


# ---- the learner's code cannot reach the tutor: it runs one process away, under a keeper ----

# Two ways of signalling the parent: at import, with os.kill; in the function, through psutil.
SIGNALS_PARENT_AT_IMPORT = """
import os, signal
os.kill(os.getppid(), signal.{signal})

def gelu_tanh(x):
    raise NotImplementedError("TODO")
"""

SIGNALS_PARENT_IN_THE_FUNCTION = """
import signal, psutil

def gelu_tanh(x):
    psutil.Process().parent().send_signal(signal.{signal})
    raise NotImplementedError("TODO")
"""


@pytest.fixture(scope="module")
def warm_pool(tmp_path_factory):
    """A warm process this test module owns, as the app would (its runs fork from it)."""
    from tutor.run.warm import WarmPool

    pool = WarmPool(tmp_path_factory.mktemp("warm") / ".tutor", cpu=True)
    assert pool.wait_ready(180), "the warm process never became ready"
    yield pool
    pool.close()


@pytest.mark.parametrize(
    ("source", "signal_name", "did"),
    [
        (SIGNALS_PARENT_AT_IMPORT, "SIGKILL", "killed"),
        (SIGNALS_PARENT_IN_THE_FUNCTION, "SIGSTOP", "stopped (SIGSTOP)"),
    ],
    ids=["kill-at-import", "stop-in-function"],
)
def test_code_that_signals_its_parent_is_named_and_the_tutor_goes_on(
    course, tmp_path, source, signal_name, did
):
    path = tmp_path / "signals.py"
    path.write_text(source.format(signal=signal_name))
    out = tutor(course, "check", "t1", "--impl", str(path), "--cpu", "--json", "--timeout", "60")
    assert out.returncode == 1, out.stderr  # tests failed: the tutor lived to say so
    data = json.loads(out.stdout)
    assert data["status"] == RunStatus.CRASHED and data["diagnoses"][0] == dx.SIGNALS_PARENT
    assert f"your code {did} the process that runs it" in data["message"]


def test_a_warm_run_whose_keeper_is_killed_runs_again_cold_with_the_same_verdict(
    course, tmp_path, warm_pool
):
    path = tmp_path / "signals.py"
    path.write_text(SIGNALS_PARENT_AT_IMPORT.format(signal="SIGKILL"))
    result = Runner(load_catalogue(course), force_cpu=True, warm=warm_pool).run("t1", str(path))
    assert not result.warm  # the warm attempt was lost; the verdict is the cold run's
    assert result.diagnoses[0] == dx.SIGNALS_PARENT
    assert "lost this run" in result.message and "your code killed" in result.message
    assert warm_pool.process.poll() is None  # the warm process itself was out of reach


THREAD_LEFT_RUNNING = """
import threading, time

threading.Thread(target=time.sleep, args=(3600,), name="learners-own").start()  # not a daemon
"""


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_thread_the_learner_leaves_running_does_not_hold_a_passing_run(
    course, tmp_path, warm, request
):
    path = tmp_path / "threaded.py"
    path.write_text(course.solution("t1_gelu.py").read_text() + THREAD_LEFT_RUNNING)
    pool = request.getfixturevalue("warm_pool") if warm else None
    result = Runner(load_catalogue(course), force_cpu=True, timeout=60, warm=pool).run(
        "t1", str(path)
    )
    assert result.status == RunStatus.PASSED, (result.status, result.diagnoses, result.message)
    assert result.warm is warm


FORGES_EVENTS = """
import json, os, sys

def _forge():
    # Find the tutor's events channel from the command line and claim every test passed.
    (path,) = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--tutor-events=")]
    with open(path, "w") as channel:
        for name in ("test_fp32_one_partly_filled_block", "test_bf16_3d"):
            test = "drills/tests/test_t1_gelu.py::" + name
            channel.write(json.dumps({{"event": "test", "id": test, "outcome": "passed"}}) + "\\n")
        channel.write(json.dumps({{"event": "session_end", "exitstatus": 0}}) + "\\n")
    os._exit(0)

_forge()
"""


def test_forged_events_on_the_tutors_channel_pass_nothing(course, tmp_path):
    path = tmp_path / "forger.py"
    path.write_text(FORGES_EVENTS.format())
    result = Runner(load_catalogue(course), force_cpu=True).run("t1", str(path))
    assert not result.passed and result.tests == []
    assert result.status == RunStatus.CRASHED and "while running test_" in result.message


# A T3 learner file that finds the plugin's own event writer in memory (where the seal's key
# lives) and reports a pass with it as its import runs, which is while the first test sets up,
# then ends the process before any real result: FORGERY says how it makes the events up.
FORGES_THROUGH_THE_PLUGIN = """
import gc, os
import pytest
from tutor.run.pytest_events import EventLog

FORGERY = "{forgery}"
if FORGERY == "results-only":  # through pytest's plugin manager
    config = next(o for o in gc.get_objects() if isinstance(o, pytest.Config))
    log = config.pluginmanager.get_plugin("tutor-events")
else:
    log = next(o for o in gc.get_objects() if isinstance(o, EventLog))
session = next(o for o in gc.get_objects() if isinstance(o, pytest.Session))
ids = [item.nodeid for item in session.items]
running, events = ids[0], []

def passes(test_id, start=True):
    if start:
        events.append({{"event": "test_start", "id": test_id}})
    events.append({{"event": "test", "id": test_id, "outcome": "passed"}})

passes(running, start=False)  # the test running now, whose set-up imports this file
if FORGERY == "invented-ids":  # 13 passed, 12 of them tests the run never collected
    for n in range(12):
        passes(f"{{running}}-{{n}}")
elif FORGERY == "results-only":  # every collected test passed, none of them started
    for test_id in ids[1:]:
        passes(test_id, start=False)
elif FORGERY == "too-few":  # 13 of the 15 collected
    for test_id in ids[1:13]:
        passes(test_id)
elif FORGERY == "out-of-order":  # all of them, the last first
    for test_id in [*ids[:0:-1]]:
        passes(test_id)
for event in events:
    log.write(event)
log.write({{"event": "session_end", "exitstatus": 0}})
os._exit(0)

def layer_norm(x, weight, bias, eps=1e-5):
    raise NotImplementedError("TODO")

def rms_norm(x, weight, eps=1e-6):
    raise NotImplementedError("TODO")
"""


def _ids(*names: str) -> list[str]:
    return [f"drills/tests/test_t9.py::{name}" for name in names]


def _stream(*events: tuple) -> Ledger:
    """A ledger after `events`: ("collected", ids), ("start", id), ("done", id, failed),
    ("end", exitstatus)."""
    ledger = Ledger()
    for kind, *args in events:
        {
            "collected": ledger.collected_tests,
            "start": ledger.test_started,
            "done": ledger.test_finished,
            "end": ledger.session_ended,
        }[kind](*args)
    return ledger


A, B = _ids("test_a", "test_b")
TWO_PASS = (
    ("collected", [A, B]),
    ("start", A),
    ("done", A, False),
    ("start", B),
    ("done", B, False),
)


@pytest.mark.parametrize(
    ("events", "returncode", "why"),
    [
        ((*TWO_PASS, ("end", 0)), 0, ""),
        ((*TWO_PASS[:3], ("start", B), ("done", B, True), ("end", 1)), 1, ""),
        ((*TWO_PASS, ("end", 0), ("done", B, False)), 0, "after the test session ended"),
        ((*TWO_PASS[:2], ("collected", [A, B])), 0, "the list of collected tests came twice"),
        ((("start", A), ("done", A, False)), 0, "test_a started, a test the run never collected"),
        ((*TWO_PASS[:2], ("start", B)), 0, "test_b started while test_a was still running"),
        ((*TWO_PASS[:2], ("end", 0)), 0, "the test session ended while test_a was running"),
        ((*TWO_PASS[:3], ("start", B), ("done", B, True), ("end", 0)), 0, "but a test failed"),
        ((*TWO_PASS, ("end", 1)), 1, "exit status 1, but no test failed"),
        ((*TWO_PASS, ("end", 0)), 3, "ended with exit status 0, its process with 3"),
    ],
    ids=[
        "all-pass",
        "one-fails",
        "after-the-end",
        "collected-twice",
        "never-collected",
        "two-running",
        "ended-running",
        "exit-0-failed",
        "exit-1-passed",
        "exit-code",
    ],
)
def test_each_rule_a_runs_events_keep_to(events, returncode, why):
    verdict = _stream(*events).verdict(returncode)
    assert (why in verdict) if why else verdict == "", verdict


@pytest.mark.parametrize(
    ("forgery", "why"),
    [
        ("invented-ids", "a test the run never collected"),
        ("results-only", "which was not running"),
        ("too-few", "13 tests reported, where 15 were collected"),
        ("out-of-order", "started out of the collected order"),
    ],
)
def test_a_pass_forged_through_the_plugins_own_writer_is_not_trusted(
    course, tmp_path, forgery, why
):
    path = tmp_path / "forger.py"
    path.write_text(FORGES_THROUGH_THE_PLUGIN.format(forgery=forgery))
    result = Runner(load_catalogue(course), force_cpu=True).run("t3", str(path))
    assert result.status == RunStatus.UNTRUSTED, (result.status, result.message)
    assert why in result.message and "could not be trusted" in result.message
    assert result.tests == [] and result.diagnoses == []


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_forged_pass_is_refused_and_a_real_one_passes_warm_or_cold(
    course, tmp_path, warm, request
):
    pool = request.getfixturevalue("warm_pool") if warm else None
    runner = Runner(load_catalogue(course), force_cpu=True, warm=pool)
    forger = tmp_path / "forger.py"
    forger.write_text(FORGES_THROUGH_THE_PLUGIN.format(forgery="invented-ids"))
    forged = runner.run("t3", str(forger))
    assert forged.status == RunStatus.UNTRUSTED and forged.warm is warm
    real = runner.run("t3", "solutions")
    assert real.status == RunStatus.PASSED and len(real.tests) == 15 and real.warm is warm


def test_a_forged_pass_of_the_learners_file_is_said_and_not_recorded(course):
    mine = course.mine("t3_layernorm.py")
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(FORGES_THROUGH_THE_PLUGIN.format(forgery="invented-ids"))
    out = tutor(course, "check", "t3", "--cpu")
    assert out.returncode == 1 and "Traceback" not in out.stdout + out.stderr
    assert "could not be trusted" in out.stdout and "Nothing was recorded" in out.stdout
    assert "t3" not in ProgressStore(course.progress_file).drills


def test_a_fifo_or_a_binary_file_under_test_is_named(course, tmp_path):
    fifo = tmp_path / "kernel.py"
    os.mkfifo(fifo)
    out = tutor(course, "check", "t1", "--impl", str(fifo), "--cpu", timeout=60)
    assert out.returncode == 2 and f"{fifo} is a FIFO" in out.stdout, out.stdout
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"def gelu_tanh(x):\n    return x\n\x00\x01\x02")
    out = tutor(course, "check", "t1", "--impl", str(binary), "--cpu", timeout=60)
    assert out.returncode == 2 and "is a binary file (a NUL byte at byte 31)" in out.stdout
    assert "None" not in out.stdout and "Traceback" not in out.stdout + out.stderr


# ---- the app ends within seconds of SIGHUP or SIGTERM, even when its shutdown would hang ----

# The app on a course, with a runner whose run never returns and ignores its cancel: a worker
# thread stuck for good, which the app's shutdown would otherwise wait on for ever.
STUCK_APP = """
import sys, threading
from pathlib import Path
from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.course.progress import ProgressStore
from tutor.ui.app import TutorApp

class StuckRunner:
    timeout = 120.0

    def run(self, drill_id, impl="mine", *, on_event=None, cancel=None):
        Path(sys.argv[2]).write_text("stuck")
        threading.Event().wait()

paths = CoursePaths(Path(sys.argv[1]))
TutorApp(load_catalogue(paths), ProgressStore(paths.progress_file),
         runner_factory=lambda catalogue, cpu: StuckRunner(), force_cpu=True,
         watch=False, gpu_probe=lambda: None).run()
"""


def _in_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, int]:
    """`argv` in a new pseudo-terminal of 120x40 (its session's controlling terminal), its
    output drained in the background; returns (pid, the terminal's master end)."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    pid, master = pty.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    def drain() -> None:
        try:
            while os.read(master, 65536):
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    return pid, master


def _ended_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("how", ["terminal closed", "SIGTERM"])
def test_the_app_is_gone_soon_after_sighup_or_sigterm_even_with_a_stuck_worker(
    course, tmp_path, how
):
    flag = tmp_path / "stuck"
    env = dict(os.environ, TERM="xterm-256color", TUTOR_NO_WARM="1")
    app = [sys.executable, "-c", STUCK_APP, str(course.root), str(flag)]
    pid, master = _in_a_terminal(app, env)
    ended = False
    try:
        deadline = time.monotonic() + 120
        while not flag.exists():  # `r` until the app is up and its run is stuck
            assert time.monotonic() < deadline, "the app never started its run"
            os.write(master, b"r")
            time.sleep(0.5)
        if how == "terminal closed":
            os.close(master)  # the kernel hangs up the terminal: SIGHUP to the app
        else:
            os.kill(pid, signal.SIGTERM)
        ended = _ended_within(pid, 60)
        assert ended, "the app outlived its shutdown deadline"
    finally:
        if not ended:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        if how != "terminal closed":
            os.close(master)


def test_the_app_opens_and_quits_with_a_fifo_where_its_language_is_kept(course):
    """A FIFO at .tutor/language once left the app a blank screen that ignored `q`: reading it
    waited for a writer for ever. `q` until the app is gone: it must go."""
    course.state_dir.mkdir()
    os.mkfifo(course.state_dir / "language")
    env = dict(os.environ, TERM="xterm-256color")
    app = [sys.executable, "-m", "tutor", "--root", str(course.root), "--cpu"]
    pid, master = _in_a_terminal(app, env)
    ended = False
    try:
        deadline = time.monotonic() + 120
        while not ended and time.monotonic() < deadline:
            os.write(master, b"q")  # read once the app is up; before, it waits in the terminal
            ended = _ended_within(pid, 0.5)
        assert ended, "the app never took its q"
    finally:
        if not ended:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(master)
