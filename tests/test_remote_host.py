"""`tutor --on HOST` against an sshd on the loopback address: the host is this machine, its runs
on the CPU interpreter, so no GPU is needed. A remote run keeps every promise a local one does:
the same verdicts and diagnoses, only the files that changed travel, a cancel, Ctrl-C, a killed
tutor or a killed ssh leave no process of the run on the host, and a host that cannot run the
kernels says why in one line.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
from cli_helpers import tutor
from disks import fill
from sshd import HOST, INSTALL, Sshd

from tutor.course import diagnoses as dx
from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.remote import client as remote_client
from tutor.remote.bundle import course_name
from tutor.remote.client import RemoteError, RemoteHost
from tutor.remote.target import Target
from tutor.run.gpu import machine_has_gpu
from tutor.run.runner import Runner
from tutor.states import RunStatus

pytestmark = pytest.mark.skipif(
    bool(Sshd.missing()), reason=f"{Sshd.missing()}: the remote tests need an sshd ({INSTALL})"
)
VERSION = __import__("tutor").__version__

# A t1 learner file that starts two processes that would outlive a careless run (one in the
# run's group, one in a session of its own), writes a flag, then spins for ever.
SPAWNS_AND_HANGS = """
import subprocess, time
from pathlib import Path

def gelu_tanh(x):
    subprocess.Popen(["sleep", "{mark}"])
    subprocess.Popen(["sleep", "{mark}"], start_new_session=True)
    Path("{flag}").write_text("running")
    while True:
        time.sleep(0.05)
"""


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    server = Sshd.start(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def remote_cache(tmp_path_factory) -> Path:
    """The host's cache folder, shared by the module's tests: its store keeps the bundle."""
    return tmp_path_factory.mktemp("host-cache")


@pytest.fixture
def reach(sshd, remote_cache, monkeypatch):
    """The tutor's environment set to reach the loopback host (multiplexed unless told)."""

    def set_up(**options) -> dict[str, str]:
        env = {**sshd.env(**options), "TUTOR_REMOTE_CACHE": str(remote_cache)}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return env

    set_up()
    return set_up


def _host(course: CoursePaths, **options) -> RemoteHost:
    """The loopback host, running on its CPU interpreter with the tests' own Python."""
    return RemoteHost(Target(HOST, sys.executable), course, cpu=True, **options)


def _remote_root(course: CoursePaths, cache: Path) -> Path:
    return cache / VERSION / "courses" / course_name(course.root)


def _on_host(root: Path, mark: str = "") -> list[psutil.Process]:
    """The processes of the course's session on the host: every process working in its folder
    there (the agent, keepers, runs, the warm process), every one carrying a run's mark
    (TUTOR_RUN_ID) in it, and the learner's sleepers."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if process.pid == os.getpid():
            continue
        try:
            if mark and process.info["cmdline"] == ["sleep", mark]:
                found.append(process)
            elif Path(process.cwd()).is_relative_to(root):
                found.append(process)
        except (psutil.Error, OSError):
            continue
    return found


def _sleepers(mark: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", mark]]


def _gone_within(check, seconds: float = 45.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not check():
            return True
        time.sleep(0.2)
    return not check()


def _hanging_learner(tmp_path: Path) -> tuple[Path, str, Path]:
    mark = f"{600 + uuid.uuid4().int % 10_000}.{uuid.uuid4().int % 1000}"  # unique sleep time
    flag = tmp_path / f"running-{uuid.uuid4().hex}"
    path = tmp_path / "learner.py"
    path.write_text(SPAWNS_AND_HANGS.format(mark=mark, flag=flag))
    return path, mark, flag


def _wait_for(path: Path, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, "the learner's code never started on the host"
        time.sleep(0.1)


# ---- a check on the host ------------------------------------------------------------------------


def test_a_check_on_the_host_gives_the_verdict_and_diagnosis_a_local_one_does(course, reach):
    catalogue = load_catalogue(course)
    mutant = course.mutants("t1") / f"{dx.GRID_TOO_SMALL}__blocks_of_256.py"
    with _host(course) as host:
        host.connect()
        runner = Runner(catalogue, force_cpu=True, host=host)
        passed = runner.run("t1", "solutions")
        remote = runner.run("t1", str(mutant))
    local = Runner(catalogue, force_cpu=True).run("t1", str(mutant))
    assert passed.passed and passed.backend == "cpu-interpreter", passed.message
    assert len(passed.tests) == len(local.tests)
    assert remote.status == local.status == RunStatus.FAILED
    assert remote.diagnoses == local.diagnoses and remote.diagnoses[0] == dx.GRID_TOO_SMALL
    assert [t.message for t in remote.tests] == [t.message for t in local.tests]
    assert "host-cache" not in json.dumps([t.to_json() for t in remote.tests]) + remote.output


def test_the_command_line_runs_on_the_host_and_the_course_remembers_it(course, reach):
    out = tutor(
        course,
        "--on",
        HOST,
        "--python",
        sys.executable,
        "--cpu",
        "check",
        "t1",
        "--impl",
        "solutions",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["passed"] is True
    assert f"kernels run on CPU interpreter on {HOST}" in out.stderr
    remembered = json.loads((course.state_dir / "remote").read_text())
    assert remembered == {"host": HOST, "python": sys.executable}
    again = tutor(course, "--cpu", "check", "t1", "--impl", "solutions")  # no --on: remembered
    assert again.returncode == 0 and f"on {HOST}" in again.stderr, again.stderr
    here = tutor(course, "--on", "local", "list")
    assert here.returncode == 0 and not (course.state_dir / "remote").exists()


def test_only_the_files_that_changed_travel(course, reach, tmp_path, monkeypatch):
    monkeypatch.setenv("TUTOR_REMOTE_CACHE", str(tmp_path / "fresh-host"))
    catalogue = load_catalogue(course)
    mine = course.mine(catalogue.drill("t1").file)
    mine.parent.mkdir(parents=True, exist_ok=True)
    first = course.solution(catalogue.drill("t1").file).read_text() + "\n# mine\n"
    mine.write_text(first)
    with _host(course) as host:
        host.connect()
        assert host.bundle.sent_files > 100  # the tutor package and the course, once
    with _host(course) as host:
        host.connect()
        assert host.bundle.sent_files == 0  # a new session: the host's store has it all
        runner = Runner(catalogue, force_cpu=True, host=host)
        assert runner.run("t1", "mine").passed
        assert runner.run("t1", "mine").passed
        assert host.bundle.sent_files == 0  # unchanged: never sent again
        mine.write_text(first + "# saved again\n")
        assert runner.run("t1", "mine").passed
        assert host.bundle.sent_files == 1  # the one file that changed
        placed = _remote_root(course, tmp_path / "fresh-host") / "drills" / "mine" / mine.name
        assert placed.read_text() == mine.read_text()
        mine.write_text(first)  # put back as it was: the host's store has that content
        assert runner.run("t1", "mine").passed
        assert host.bundle.sent_files == 1 and placed.read_text() == first


def test_the_second_check_is_forked_from_the_hosts_warm_process(course, reach):
    """The app's session keeps a warm process on the host; `tutor check`'s session borrows it
    while the app is open, as it borrows the app's here."""
    catalogue = load_catalogue(course)
    with _host(course, warm=True) as app:
        app.connect()
        runner = Runner(catalogue, force_cpu=True, host=app)
        deadline = time.monotonic() + 180
        result = runner.run("t1", "solutions")
        while not result.warm and time.monotonic() < deadline:  # its imports take a while
            time.sleep(1)
            result = runner.run("t1", "solutions")
        assert result.warm and result.passed, result.message
        with _host(course) as check:
            check.connect()
            borrowed = Runner(catalogue, force_cpu=True, host=check).run("t1", "solutions")
        assert borrowed.warm and borrowed.passed, borrowed.message
    root = _remote_root(course, Path(os.environ["TUTOR_REMOTE_CACHE"]))
    assert _gone_within(lambda: _on_host(root)), "the app's session outlived it on the host"
    with _host(course) as alone:  # the app closed: its warm process is gone with it
        alone.connect()
        assert not Runner(catalogue, force_cpu=True, host=alone).run("t1", "solutions").warm


# ---- interrupts and faults ------------------------------------------------------------------


def test_a_cancel_ends_the_run_and_all_it_started_on_the_host(
    course, reach, remote_cache, tmp_path
):
    path, mark, flag = _hanging_learner(tmp_path)
    cancel = threading.Event()
    with _host(course) as host:
        host.connect()
        runner = Runner(load_catalogue(course), force_cpu=True, host=host)
        threading.Thread(target=lambda: (_wait_for(flag), cancel.set()), daemon=True).start()
        result = runner.run("t1", str(path), cancel=cancel)
        assert result.status == RunStatus.CANCELLED
        root = _remote_root(course, remote_cache)
        assert _gone_within(lambda: _sleepers(mark)), "a process the learner started outlived it"
        assert runner.run("t1", "solutions").passed  # the session goes on
    assert _gone_within(lambda: _on_host(root, mark)), [p.info for p in _on_host(root, mark)]


@pytest.mark.parametrize("multiplex", [True, False], ids=["shared-connection", "own-connection"])
def test_a_killed_ssh_leaves_nothing_running_on_the_host(
    course, reach, remote_cache, tmp_path, multiplex
):
    reach(multiplex=multiplex)
    path, mark, flag = _hanging_learner(tmp_path)
    root = _remote_root(course, remote_cache)
    results = []
    with _host(course) as host:
        host.connect()
        runner = Runner(load_catalogue(course), force_cpu=True, host=host)
        worker = threading.Thread(target=lambda: results.append(runner.run("t1", str(path))))
        worker.start()
        _wait_for(flag)
        assert _on_host(root, mark), "the run's processes should be up on the host by now"
        host._session.process.kill()  # the ssh client, as a dropped connection kills it
        worker.join(timeout=60)
        assert not worker.is_alive(), "the run did not end when its connection went"
    assert results[0].status == RunStatus.SETUP_ERROR
    assert f"the connection to {HOST} was lost" in results[0].message
    assert _gone_within(lambda: _on_host(root, mark)), [p.info for p in _on_host(root, mark)]


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGINT, 130), (signal.SIGKILL, -signal.SIGKILL)],
    ids=["Ctrl-C", "SIGKILL"],
)
def test_however_the_tutor_ends_nothing_of_its_run_is_left_on_the_host(
    course, reach, remote_cache, tmp_path, signum, code
):
    path, mark, flag = _hanging_learner(tmp_path)
    root = _remote_root(course, remote_cache)
    command = [sys.executable, "-m", "tutor", "--root", str(course.root), "--on", HOST]
    command += ["--python", sys.executable, "--cpu", "check", "t1", "--impl", str(path)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        _wait_for(flag)
        process.send_signal(signum)
        process.wait(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, process.stderr.read()
    assert _gone_within(lambda: _on_host(root, mark)), [p.info for p in _on_host(root, mark)]


def test_a_full_disk_on_the_host_is_one_line_and_loses_nothing(
    course, reach, small_disk, monkeypatch
):
    reach(multiplex=False)
    monkeypatch.setenv("TUTOR_REMOTE_CACHE", str(small_disk / "cache"))  # the host's store
    learner = course.mine("t1_gelu.py")
    learner.parent.mkdir(parents=True, exist_ok=True)
    learner.write_text(course.solution("t1_gelu.py").read_text())
    before = learner.read_bytes()
    fill(small_disk)
    out = tutor(course, "--on", HOST, "--python", sys.executable, "--cpu", "check", "t1")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) <= 2
    assert f"the disk of {HOST} is full where the tutor keeps its files" in out.stderr, out.stderr
    assert learner.read_bytes() == before
    assert _gone_within(lambda: _on_host(small_disk / "cache"))


def test_a_hung_kernel_is_stopped_by_the_same_time_limit_as_here(course, reach, tmp_path):
    path, mark, _ = _hanging_learner(tmp_path)
    with _host(course) as host:
        host.connect()
        result = Runner(load_catalogue(course), force_cpu=True, timeout=5, host=host).run(
            "t1", str(path)
        )
    assert result.status == RunStatus.TIMEOUT and "killed after 5 s while running" in result.message
    assert dx.KERNEL_HANG in result.diagnoses


def test_a_bench_on_a_host_without_a_gpu_says_so_at_once(course, reach):
    out = tutor(course, "--on", HOST, "--python", sys.executable, "--cpu", "bench", "t1")
    assert out.returncode == 1 and "No timing on the CPU" in out.stdout, out.stdout + out.stderr


# ---- a host that cannot ---------------------------------------------------------------------


def test_a_host_without_a_gpu_is_refused_unless_the_cpu_is_asked_for(course, reach):
    if machine_has_gpu():  # the host is this machine
        pytest.skip("this machine has a GPU")
    host = RemoteHost(Target(HOST, sys.executable), course, cpu=False)
    with pytest.raises(RemoteError, match=f"{HOST} has no NVIDIA GPU that its driver shows"):
        host.connect()


def test_a_host_without_the_python_named_is_refused_in_one_line(course, reach):
    out = tutor(course, "--on", HOST, "--python", "/nowhere/python3", "check", "t1")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"tutor: {HOST} has no /nowhere/python3" in out.stderr, out.stderr


def test_a_python_without_torch_is_named_with_what_it_lacks(course, reach, tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    with pytest.raises(RemoteError, match="cannot import torch, triton, numpy, pytest"):
        RemoteHost(Target(HOST, str(bare / "bin" / "python")), course, cpu=True).connect()


def test_a_host_that_will_not_let_the_key_in_is_one_line_naming_batch_mode(course, reach):
    reach(stranger=True, multiplex=False)  # not through the connection the others share
    with pytest.raises(RemoteError, match="never asks anything"):
        _host(course).connect()


def test_first_contact_makes_the_environment_and_says_each_step(
    course, reach, tmp_path, monkeypatch
):
    """Without --python the host gets an environment of its own in its cache, and the learner
    sees each step; with pip unable to reach an index here, the refusal carries pip's words."""
    monkeypatch.setenv("TUTOR_REMOTE_CACHE", str(tmp_path / "new-host"))
    monkeypatch.setenv("TUTOR_REMOTE_PIP", "--no-index --find-links /nowhere")
    said: list[str] = []
    host = RemoteHost(Target(HOST), course, cpu=True, on_progress=said.append)
    with pytest.raises(RemoteError, match=r"pip on tutor-test failed \(pip install"):
        host.connect()
    env = tmp_path / "new-host" / VERSION / "env"
    assert any("making the tutor's Python environment in" in line for line in said), said
    build = "cu12" if machine_has_gpu() else "cpu"  # torch for the host's driver, or its CPU
    assert any(
        f"installing torch and Triton from https://download.pytorch.org/whl/{build}" in line
        for line in said
    ), said
    assert (env / "bin" / "python").exists()
    # Nothing to install: the environment is ready, and the next contact does not make it again.
    monkeypatch.setattr(remote_client, "HOST_REQUIREMENTS", [])
    said.clear()
    with pytest.raises(RemoteError):  # an empty environment cannot run the agent
        RemoteHost(Target(HOST), course, cpu=True, on_progress=said.append).connect()
    assert any("the environment is ready" in line for line in said), said
    said.clear()
    with pytest.raises(RemoteError):
        RemoteHost(Target(HOST), course, cpu=True, on_progress=said.append).connect()
    assert not any("environment" in line for line in said), said


def test_a_tutor_gone_while_the_host_installs_ends_pip_there(course, reach, tmp_path, monkeypatch):
    """pip waits on an index that never answers; the tutor's ssh dies (Ctrl-C, a dropped
    connection): pip and the bootstrap end on the host, not when pip would have given up."""
    blackhole = socket.socket()
    blackhole.bind(("127.0.0.1", 0))
    blackhole.listen()  # accepts connections, never answers
    cache = tmp_path / "slow-host"
    index = f"http://127.0.0.1:{blackhole.getsockname()[1]}/simple"
    monkeypatch.setenv("TUTOR_REMOTE_CACHE", str(cache))
    monkeypatch.setenv("TUTOR_REMOTE_PIP", f"--index-url {index} --timeout 600 --retries 0")
    said: list[str] = []
    host = RemoteHost(Target(HOST), course, cpu=True, on_progress=said.append)
    failed: list[BaseException] = []
    connecting = threading.Thread(target=lambda: _catch(host.connect, failed), daemon=True)
    connecting.start()
    pips = lambda: [  # noqa: E731
        p
        for p in psutil.process_iter(["cmdline"])
        if str(cache) in " ".join(p.info["cmdline"] or [])
    ]
    try:
        deadline = time.monotonic() + 120
        while not any("updating pip" in line for line in said):
            assert time.monotonic() < deadline, said
            time.sleep(0.2)
        assert _gone_within(lambda: not pips(), 30), "pip never started on the host"
        ssh = [p for p in psutil.Process().children(recursive=True) if "ssh" in p.name()]
        for process in ssh:
            process.kill()
        connecting.join(timeout=60)
        assert failed and isinstance(failed[0], RemoteError)
        assert _gone_within(pips, 30), [p.info for p in pips()]
    finally:
        blackhole.close()


def _catch(call, into: list) -> None:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - the test looks at it
        into.append(exc)
