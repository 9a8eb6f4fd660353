"""The warm process serves CPU and GPU runs: it never starts CUDA, and runs forked from it keep
every promise a cold run keeps (tutor.run.zygote, tutor.run.warm).

The GPU half (each forked run starting CUDA for itself) is measured on the H200 by
`tutor dev feedback`; what can be proven here, without a GPU, is that nothing in the warm
process's imports would start CUDA, that a process where CUDA did start refuses to fork, and
that drill runs and bench runs are both forked and use the course's kernel cache.
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
from pathlib import Path

import psutil
import pytest
import torch

from tutor.course import diagnoses as dx
from tutor.course.catalogue import load_catalogue
from tutor.run import zygote
from tutor.run.protocol import RUN_FDS, Refused, RunRequest, read_reply
from tutor.run.runner import Runner
from tutor.run.supervisor import supervise
from tutor.run.warm import WarmPool
from tutor.states import BenchStatus

# A T3 learner file that reports where its Triton would cache compiled kernels, then stops.
REPORTS_CACHE = """
import os
from pathlib import Path

def layer_norm(x, weight, bias, eps=1e-5):
    Path({flag!r}).write_text(os.environ.get("TRITON_CACHE_DIR", "unset"))
    raise NotImplementedError("TODO")

def rms_norm(x, weight, eps=1e-6):
    raise NotImplementedError("TODO")
"""


@pytest.fixture
def pool(course):
    warm = WarmPool(course.state_dir, cpu=True)
    assert warm.ready.wait(timeout=180), "the warm process never became ready"
    yield warm
    warm.close()


def test_the_warm_process_starts_no_cuda(pool):
    assert pool.facts.cuda_started is False
    assert pool.facts.cuda_calls == []


def test_the_audit_sees_what_would_start_cuda():
    original = torch.cuda._lazy_init
    with zygote.cuda_audit() as calls:
        try:
            torch.cuda._lazy_init()  # the call behind every device query and GPU tensor
        except (AssertionError, RuntimeError):
            pass  # no CUDA in this build: the attempt is what counts
    assert calls[:1] == ["_lazy_init"]  # on a GPU it goes on to count the devices
    assert torch.cuda._lazy_init is original  # put back as it was


# Runs a drill's tests the way a warm run does, after the warm process's imports, and prints
# the modules the run imported for itself.
RUN_AFTER_PRELOAD = """
import sys
from tutor.run import zygote
zygote._preload("cpu")
import pytest
before = set(sys.modules)
pytest.main(sys.argv[1:])
print("IMPORTED", " ".join(sorted(set(sys.modules) - before)))
"""


def test_a_failing_run_imports_nothing_heavy_after_the_warm_process(catalogue, tmp_path):
    # Each forked run pays for what it imports itself: sympy alone (torch._check's first use,
    # in every failed comparison) cost a run 0.4 s of CPU. Only the run's own files are new.
    drill = catalogue.drill("t0")
    mutant = catalogue.paths.mutants("t0") / "grid-too-small__floor_div.py"
    test_file = catalogue.paths.test_file(drill.file)
    args = [str(test_file), f"--impl={mutant}", "--cpu", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [sys.executable, "-c", RUN_AFTER_PRELOAD, *args, "--tb=native"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        # As the runner's: no plugins of the environment, the interpreter chosen by --cpu.
        env={
            **{k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"},
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        },
    )
    assert "failed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("IMPORTED")]
    packages = {name.split(".")[0] for name in line.split()[1:]}
    assert not packages & {"sympy", "mpmath", "torch", "triton", "_pytest", "pdb", "xml"}, line


def test_a_warm_process_where_cuda_started_refuses_to_fork():
    ours, theirs = socket.socketpair()
    output_read, output_write = os.pipe()
    children = psutil.Process().children()
    try:
        request = RunRequest("pytest", [], "/", {})
        socket.send_fds(ours, [request.encode()], [output_write] * RUN_FDS)
        zygote._handle(theirs, [], cuda_started=True)
        assert psutil.Process().children() == children  # nothing was forked
        assert isinstance(read_reply(ours.recv(4096)), Refused)
    finally:
        for fd in (output_read, output_write):
            os.close(fd)
        ours.close()
        theirs.close()


def test_drill_runs_are_forked_and_use_the_course_kernel_cache(course, pool, tmp_path):
    flag = tmp_path / "cache-dir"
    learner = tmp_path / "learner.py"
    learner.write_text(REPORTS_CACHE.format(flag=str(flag)))
    catalogue = load_catalogue(course)
    for warm in (pool, None):
        flag.unlink(missing_ok=True)
        result = Runner(catalogue, force_cpu=True, warm=warm).run("t3", str(learner))
        assert result.warm is (warm is not None)
        assert flag.read_text() == str(course.triton_cache)


def test_a_cache_folder_that_is_a_link_is_not_used(course, tmp_path):
    """Never written through: each cache is left out where a link stands in its place."""
    course.state_dir.mkdir(parents=True, exist_ok=True)
    course.triton_cache.symlink_to(tmp_path, target_is_directory=True)
    assert course.kernel_cache_env() == {"TUTOR_CUDA_CACHE": str(course.cuda_cache)}
    course.cuda_cache.symlink_to(tmp_path, target_is_directory=True)
    assert course.kernel_cache_env() == {}


def test_a_bench_process_is_forked_from_the_warm_process(course, pool, tmp_path):
    out = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "tutor.bench.child", "--drill", "t3", "--impl"]
    cmd += [str(course.solution("t3_layernorm.py")), "--out", str(out), "--root", str(course.root)]
    # The pool is the CPU's, so the bench runs on the interpreter on any machine: it says so
    # and times nothing (a GPU's benches from its own pool are measured by `tutor dev report`).
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    ended = supervise(cmd, cwd=course.root, env=env, timeout=120, warm=pool, on_output=None)
    assert ended.warm and ended.returncode == 0
    assert json.loads(Path(out).read_text())["status"] == BenchStatus.NO_GPU


def test_a_run_that_lands_on_the_other_backend_starts_again_cold(course):
    # A warm process for the GPU imports triton for the compiler; a run forked from it that finds
    # no usable GPU (here: none at all) must not interpret with compiled library functions.
    gpu_pool = WarmPool(course.state_dir, cpu=False)
    try:
        assert gpu_pool.ready.wait(timeout=180)
        runner = Runner(load_catalogue(course), force_cpu=True)
        runner.warm = gpu_pool  # as if NVML had seen a GPU that torch then could not use
        result = runner.run("t3", "solutions")
        assert result.warm and result.passed, (result.status, result.diagnoses, result.message)
    finally:
        gpu_pool.close()


# ---- a warm process that dies, stops or loses its client: no run hangs, nothing is left ----

# A T1 learner file that records its pid (and its parent's, the run's keeper) once, then waits
# a moment (or for ever) before it fails as not started.
WAITS = """
import os, time
from pathlib import Path

def gelu_tanh(x):
    flag = Path({flag!r})
    if not flag.exists():
        flag.write_text(f"{{os.getpid()}} {{os.getppid()}}")
        time.sleep({wait})
    raise NotImplementedError("TODO")
"""


def _learner(tmp_path: Path, wait: float) -> tuple[Path, Path]:
    flag = tmp_path / "started"
    path = tmp_path / "learner.py"
    path.write_text(WAITS.format(flag=str(flag), wait=wait))
    return path, flag


def _wait_for(path: Path, seconds: float = 120.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return [int(pid) for pid in path.read_text().split()]


def _gone(pid: int, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def _check(course, *args: str) -> subprocess.CompletedProcess:
    """`tutor check` in a process of its own: it borrows the warm process this test owns."""
    command = [sys.executable, "-m", "tutor", "--root", str(course.root), "check", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_warm_process_killed_during_a_run_takes_nothing_of_the_run(course, pool, tmp_path):
    path, flag = _learner(tmp_path, wait=2)
    results = []
    runner = Runner(load_catalogue(course), force_cpu=True, warm=pool)
    thread = threading.Thread(target=lambda: results.append(runner.run("t1", str(path))))
    thread.start()
    _wait_for(flag)
    old = pool.process.pid
    pool.process.kill()
    thread.join(timeout=300)
    (result,) = results
    assert result.warm and result.diagnoses == [dx.NOT_WRITTEN], result.message
    assert not result.message  # nothing to excuse: the run never noticed
    assert pool.wait_ready(180) and pool.process.pid != old  # another one took its place


def test_a_stopped_warm_process_holds_no_run_and_is_replaced(course, pool, tmp_path):
    path, flag = _learner(tmp_path, wait=3)
    check = subprocess.Popen(
        [sys.executable, "-m", "tutor", "--root", str(course.root), "check", "t1"]
        + ["--impl", str(path), "--cpu", "--json", "--timeout", "60"],
        stdout=subprocess.PIPE,
        text=True,
    )
    _wait_for(flag)
    stopped = pool.process.pid
    os.kill(stopped, signal.SIGSTOP)  # during a borrowed run
    out, _ = check.communicate(timeout=300)
    first = json.loads(out)
    assert first["runner"] == "warm" and first["diagnoses"] == [dx.NOT_WRITTEN]
    # The next run finds it stopped: cold at once, and the stopped process is retired.
    second = json.loads(_check(course, "t1", "--impl", str(path), "--cpu", "--json").stdout)
    assert second["runner"] == "cold" and second["diagnoses"] == [dx.NOT_WRITTEN]
    assert _gone(stopped)
    assert pool.wait_ready(180) and pool.process.pid != stopped  # its owner started another
    third = json.loads(_check(course, "t1", "--impl", str(path), "--cpu", "--json").stdout)
    assert third["runner"] == "warm"


def test_a_borrowed_run_ends_when_its_tutor_check_is_killed(course, pool, tmp_path):
    path, flag = _learner(tmp_path, wait=3600)
    check = subprocess.Popen(
        [sys.executable, "-m", "tutor", "--root", str(course.root), "check", "t1"]
        + ["--impl", str(path), "--cpu"],
        stdout=subprocess.DEVNULL,
    )
    run, keeper = _wait_for(flag)
    assert psutil.Process(keeper).ppid() == pool.process.pid  # borrowed: forked from ours
    check.kill()
    check.wait()
    assert _gone(run) and _gone(keeper)
    assert pool.process.poll() is None  # the warm process serves on


OWNS_A_WARM_PROCESS = """
import sys, time
from pathlib import Path
from tutor.run.warm import WarmPool

pool = WarmPool(Path(sys.argv[1]), cpu=True)
assert pool.wait_ready(180)
print(pool.process.pid, flush=True)
time.sleep(600)
"""


def test_a_stopped_warm_process_does_not_outlive_its_killed_owner(tmp_path):
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNS_A_WARM_PROCESS, str(tmp_path / ".tutor")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        warm = int(owner.stdout.readline())
        os.kill(warm, signal.SIGSTOP)
        owner.kill()  # as a SIGKILLed app: no clean-up of its own
        owner.wait()
        assert _gone(warm), psutil.Process(warm).as_dict(["status", "ppid"])
    finally:
        owner.kill()


def test_a_warm_process_that_does_not_answer_is_retired_and_replaced(
    course, pool, tmp_path, monkeypatch
):
    import tutor.run.warm

    # Stopped, but not seen as stopped: only its silence shows, as with one stuck in a call.
    monkeypatch.setattr(tutor.run.warm, "_stopped", lambda pid: False)
    monkeypatch.setattr(tutor.run.warm, "ANSWER_TIMEOUT_S", 1.0)
    silent = pool.process.pid
    os.kill(silent, signal.SIGSTOP)
    path, _ = _learner(tmp_path, wait=0)
    result = Runner(load_catalogue(course), force_cpu=True, warm=pool).run("t1", str(path))
    assert not result.warm and result.diagnoses == [dx.NOT_WRITTEN]  # this run went cold
    assert _gone(silent)
    assert pool.wait_ready(180) and pool.process.pid != silent and pool.launches == 2


# ---- the spare: the next run's keeper and run, forked (and on a GPU primed) ahead ----


def _spare(pool: WarmPool, seconds: float = 60.0) -> tuple[int, int]:
    """The warm process's spare keeper and its primed run, once both are forked."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for keeper in psutil.Process(pool.process.pid).children():
            try:
                runs = keeper.children()
                if len(runs) == 1 and keeper.cmdline() == runs[0].cmdline():
                    return keeper.pid, runs[0].pid
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError("the warm process forked no spare")


def test_a_run_goes_to_the_spare_forked_before_it_and_another_is_forked(course, pool, tmp_path):
    keeper, primed = _spare(pool)
    path, flag = _learner(tmp_path, wait=0)
    result = Runner(load_catalogue(course), force_cpu=True, warm=pool).run("t1", str(path))
    assert result.warm and result.diagnoses == [dx.NOT_WRITTEN], result.message
    assert _wait_for(flag) == [primed, keeper]  # the run was the primed process
    assert _spare(pool)[0] != keeper  # the next run has its own


def test_a_run_asking_other_cuda_settings_gets_a_fresh_process(course, pool, tmp_path, monkeypatch):
    # A CUDA started under the warm process's settings is not the one this run asked for.
    keeper, primed = _spare(pool)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    path, flag = _learner(tmp_path, wait=0)
    result = Runner(load_catalogue(course), force_cpu=True, warm=pool).run("t1", str(path))
    assert result.warm and result.diagnoses == [dx.NOT_WRITTEN], result.message
    run, its_keeper = _wait_for(flag)
    assert its_keeper == keeper and run != primed and _gone(primed)


def test_an_unused_spare_ends_with_its_warm_process(pool):
    keeper, primed = _spare(pool)
    pool.process.kill()
    assert _gone(keeper) and _gone(primed)


def test_a_course_warm_process_compiles_into_the_course_kernel_cache(course):
    # Its spare runs launch a kernel to start Triton (on a GPU): into the course's cache.
    pool = WarmPool.for_course(course, cpu=True)
    try:
        assert pool.ready.wait(timeout=180)
        environment = psutil.Process(pool.process.pid).environ()
        assert environment["TRITON_CACHE_DIR"] == str(course.triton_cache)
    finally:
        pool.close()
