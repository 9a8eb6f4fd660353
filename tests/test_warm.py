"""The warm process serves CPU and GPU runs: it never starts CUDA, and runs forked from it keep
every promise a cold run keeps (tutor.zygote, tutor.warm).

The GPU half (each forked run starting CUDA for itself) is measured on the H200 by
scripts/feedback_bench.py; what can be proven here, without a GPU, is that nothing in the warm
process's imports would start CUDA, that a process where CUDA did start refuses to fork, and
that drill runs and bench runs are both forked and use the course's kernel cache.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest
import torch

from tutor import zygote
from tutor.catalogue import load_catalogue
from tutor.runner import Runner
from tutor.supervisor import supervise
from tutor.warm import WarmPool

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
    assert pool.facts["cuda_started"] is False
    assert pool.facts["cuda_calls"] == []


def test_the_audit_sees_what_would_start_cuda():
    original = torch.cuda._lazy_init
    with zygote.cuda_audit() as calls:
        try:
            torch.cuda._lazy_init()  # the call behind every device query and GPU tensor
        except (AssertionError, RuntimeError):
            pass  # no CUDA in this build: the attempt is what counts
    assert calls == ["_lazy_init"]
    assert torch.cuda._lazy_init is original  # put back as it was


def test_a_warm_process_where_cuda_started_refuses_to_fork():
    ours, theirs = socket.socketpair()
    output_read, output_write = os.pipe()
    try:
        socket.send_fds(ours, [json.dumps({"args": []}).encode()], [output_write, output_write])
        owners: dict = {}
        assert zygote._handle(theirs, owners, [], cuda_started=True)
        assert owners == {}  # nothing was forked
        assert "refused" in json.loads(ours.recv(4096))
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
    course.state_dir.mkdir(parents=True, exist_ok=True)
    course.triton_cache.symlink_to(tmp_path, target_is_directory=True)
    assert course.kernel_cache_env() == {}


def test_a_bench_process_is_forked_from_the_warm_process(course, pool, tmp_path):
    out = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "tutor.bench.child", "--drill", "t3", "--impl"]
    cmd += [str(course.solution("t3_layernorm.py")), "--out", str(out), "--root", str(course.root)]
    ended = supervise(
        cmd, cwd=course.root, env=dict(os.environ), timeout=120, warm=pool, on_output=None
    )
    assert ended.warm and ended.returncode == 0
    assert json.loads(Path(out).read_text())["status"] == "no-gpu"  # no GPU here: said, not timed


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
