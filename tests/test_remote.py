"""The pieces of `tutor --on HOST` that need no host: its messages and their seal, the bundle on
both sides, the host's set-up decisions, the ssh command, the remembered host, and the command
line on a machine without torch (tests/test_remote_host.py runs them against a real sshd).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tutor.course.paths import CoursePaths
from tutor.remote import hostenv, messages, protocol, ship, ssh, target
from tutor.remote.bundle import Bundle
from tutor.remote.client import HOST_REQUIREMENTS, RemoteHost, _Session
from tutor.remote.protocol import Done, Event, Files, Progress, Refusal, Run, Welcome, decode
from tutor.remote.store import BadBundle, Store, sha256
from tutor.run.seal import seal

ROOT = Path(__file__).resolve().parents[1]

# ---- the messages -------------------------------------------------------------------------


def test_every_message_reads_back_as_written():
    samples = [
        protocol.Hello("0.1.0", "ab" * 32, "c0ffee", cpu=True, requirements=["torch>=2.8"]),
        Files({"drills/mine/t1_gelu.py": "0" * 64}, {"0" * 64: protocol.pack(b"x")}),
        Run(
            "id", ["py", "-m", "pytest"], "/r", {"A": "1"}, ["B"], 120.0, 180.0, 2**30, True, False
        ),
        protocol.Cancel("id"),
        protocol.Ping(),
        Progress("pip", "Collecting torch"),
        Refusal("no-gpu", {"platform": "Linux x86_64"}),
        Welcome("/r", "/py", "3.11.7", ["NVIDIA H100"], True, "570.1", "12.8", 2**36, [[7, 9]]),
        protocol.Need(["0" * 64]),
        protocol.Synced(3),
        protocol.Serving(42, "cuda"),
        protocol.Output("id", protocol.pack(b"out\n")),
        Event("id", '{"event": "test_start", "id": "x"}'),
        Done("id", "exited", 0, peak_rss=5, warm=True, files={"/r/x": protocol.pack(b"{}")}),
    ]
    for message in samples:
        assert decode(message.encode()) == message


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b"[1, 2]",
        b'{"kind": "nothing-we-send"}',
        b'{"kind": "done", "id": "x"}',  # a field missing
        b'{"kind": "done", "id": "x", "how": "exited", "returncode": "0"}',  # of the wrong kind
        b'{"kind": "need", "shas": [1]}',
        b'{"kind": "progress", "step": true}',
    ],
)
def test_a_line_that_is_not_a_message_reads_as_none(line):
    assert decode(line) is None


class _Stdout(io.BytesIO):
    def read1(self, size: int = -1) -> bytes:
        return super().read1(size)


def test_lines_without_the_sessions_seal_count_for_nothing():
    """The learner's code runs on the host as the agent's user and can write to the agent's
    output (/proc/PID/fd/1); only lines sealed with the session's key reach a run."""
    host = RemoteHost(target.Target("h"), CoursePaths(ROOT))
    session = _Session(host)
    queue = session.expect("run")
    forged = Done("run", "exited", 0).encode()
    sealed = seal(session.key, Event("run", '{"event": "session_end"}').encode().rstrip())
    wrong_key = seal(b"k" * 32, Done("run", "exited", 0).encode().rstrip())

    class Process:
        stdout = _Stdout(forged + wrong_key + b"\n" + sealed + b"\n")
        returncode = 0

        def wait(self):
            return 0

    session.process = Process()  # type: ignore[assignment]
    session.stderr_done = True
    session._read()
    got = [queue.get_nowait() for _ in range(queue.qsize())]
    assert [type(m).__name__ for m in got] == ["Event", "_Lost"]


# ---- the bundle -----------------------------------------------------------------------------


def test_the_store_keeps_contents_by_hash_and_places_only_what_differs(tmp_path):
    store = Store(tmp_path / "store")
    data = b"def add(x, y):\n    return x + y\n"
    digest = sha256(data)
    with pytest.raises(BadBundle):
        store.add(digest, b"something else")
    assert store.missing([digest]) == [digest]
    store.add(digest, data)
    assert store.missing([digest]) == []
    root = tmp_path / "course"
    assert store.place(root, {"drills/mine/t0_add.py": digest}) == 1
    assert store.place(root, {"drills/mine/t0_add.py": digest}) == 0  # there already
    (root / "drills/mine/t0_add.py").write_text("changed by a run")
    assert store.place(root, {"drills/mine/t0_add.py": digest}) == 1
    assert (root / "drills/mine/t0_add.py").read_bytes() == data
    for outside in ("../escape.py", "drills/../../escape.py", "/etc/passwd", ""):
        with pytest.raises(BadBundle):
            store.place(root, {outside: digest})


def _runner_command(course: CoursePaths, impl: Path) -> tuple[list[str], dict[str, str]]:
    from tutor.course.catalogue import load_catalogue
    from tutor.run.runner import Runner

    runner = Runner(load_catalogue(course), force_cpu=True, memory_limit=2**30)
    return runner.command("t1", str(impl), "{tutor-events-path}"), runner._child_env()


def test_a_runs_command_is_the_hosts_and_only_what_changed_travels(course, tmp_path, monkeypatch):
    monkeypatch.setenv("SOMETHING_OF_THIS_MACHINE", "secret")
    monkeypatch.setenv("TUTOR_SSH", "ssh -F /here/only")
    bundle = Bundle(course)
    manifest = bundle.manifest()
    assert "drills.yaml" in manifest.entries and "tutor/remote/agent.py" in manifest.entries
    assert "tutor/lang/locale/zh/LC_MESSAGES/tutor.mo" in manifest.entries
    assert not any("__pycache__" in name for name in manifest.entries)
    # a CUDA C++ drill built on the host's CPU includes the tutor's own headers
    headers = sorted((ROOT / "tutor/kernels/cuda/cpu").rglob("*.h"))
    assert headers and all(
        f"tutor/{h.relative_to(ROOT / 'tutor').as_posix()}" in manifest.entries for h in headers
    )
    bundle.attach("/host/course", "/host/python")
    learner = Path(tempfile.mkdtemp(prefix="elsewhere-")) / "gelu.py"  # outside the course
    learner.write_text("def gelu_tanh(x):\n    return x\n")
    command, env = _runner_command(course, learner)
    prepared = bundle.prepare(command, env, course.root, [])
    assert prepared.cmd[0] == "/host/python"
    assert "--rootdir=/host/course" in prepared.cmd
    assert "/host/course/drills/tests/test_t1_gelu.py" in prepared.cmd
    impl = next(arg for arg in prepared.cmd if arg.startswith("--impl="))
    assert re.fullmatch(r"--impl=/host/course/\.tutor/remote/outside/[0-9a-f]{12}/gelu\.py", impl)
    assert prepared.cwd == "/host/course"
    assert prepared.env["TRITON_CACHE_DIR"] == "/host/course/.tutor/triton-cache"
    assert "SOMETHING_OF_THIS_MACHINE" not in prepared.env and "TUTOR_SSH" not in prepared.env
    shipped = impl.removeprefix("--impl=/host/course/")
    assert prepared.files is not None and list(prepared.files.entries) == [shipped]
    assert list(prepared.files.blobs) == [sha256(learner.read_bytes())]
    again = bundle.prepare(command, env, course.root, [])
    assert again.files is None  # nothing changed: nothing travels
    # the host's paths in its words are this machine's again
    said = json.dumps({"message": f"{impl[7:]}:2: wrong"}).encode()
    assert json.loads(bundle.local_json(said))["message"] == f"{learner}:2: wrong"
    assert (
        bundle.local_text(b"/host/course/drills/x.py") == str(course.root / "drills/x.py").encode()
    )


def test_a_file_the_run_returns_goes_to_a_folder_of_its_own_on_the_host(course, tmp_path):
    bundle = Bundle(course)
    bundle.manifest()
    bundle.attach("/host/course", "/host/python")
    out = tmp_path / "report.json"
    prepared = bundle.prepare(["python", "-m", "x", "--out", str(out)], {}, course.root, [out])
    (remote,) = prepared.returns
    assert prepared.cmd[-1] == remote and remote.startswith("/host/course/.tutor/remote/returns/")
    assert prepared.returns[remote] == out


# ---- the host's set-up ----------------------------------------------------------------------


def _facts(**changes) -> dict:
    base = {"has_gpu": True, "cuda_number": 12080, "cuda": "12.8", "driver": "570.1"}
    return {**base, "platform": "Linux x86_64", **changes}


@pytest.mark.parametrize(
    ("cuda", "build"), [(13000, "cu128"), (12080, "cu128"), (12060, "cu126"), (12020, "cu126")]
)
def test_torch_is_built_for_a_cuda_the_hosts_driver_runs(cuda, build):
    index = hostenv.torch_index(_facts(cuda_number=cuda), cpu=False)
    assert index == f"https://download.pytorch.org/whl/{build}"


def test_a_driver_too_old_for_any_torch_is_refused_with_its_numbers():
    with pytest.raises(hostenv.Refused) as refused:
        hostenv.torch_index(_facts(cuda_number=11080, cuda="11.8", driver="520.61"), cpu=False)
    said = messages.refusal("box", Refusal(refused.value.reason, refused.value.facts))
    assert "the NVIDIA driver on box (520.61) runs CUDA up to 11.8" in said
    assert "needs CUDA 12.0" in said


def test_the_cpu_interpreter_on_a_host_without_a_gpu_gets_the_cpu_build():
    assert hostenv.torch_index(_facts(has_gpu=False), cpu=True).endswith("/whl/cpu")
    with pytest.raises(hostenv.Refused, match="no-gpu"):
        hostenv.check_host(_facts(has_gpu=False), cpu=False)


def test_a_python_of_the_learners_is_checked_for_what_a_run_needs():
    missing = {"python": "/p", "missing": ["torch", "triton"], "torch_cuda": ""}
    with pytest.raises(hostenv.Refused, match="python-lacks"):
        hostenv.check_python(missing, _facts(), cpu=False)
    cpu_build = {"python": "/p", "missing": [], "torch_cuda": ""}
    with pytest.raises(hostenv.Refused, match="torch-cpu-only"):
        hostenv.check_python(cpu_build, _facts(), cpu=False)
    hostenv.check_python(cpu_build, _facts(), cpu=True)  # the interpreter is what was asked
    newer = {"python": "/p", "missing": [], "torch_cuda": "13.0"}
    with pytest.raises(hostenv.Refused, match="driver-too-old"):
        hostenv.check_python(newer, _facts(), cpu=False)
    hostenv.check_python({**newer, "torch_cuda": "12.9"}, _facts(), cpu=False)  # minor: fine


def test_this_pythons_torch_is_read_without_importing_it():
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, json; from tutor.remote import hostenv; "
            "f = hostenv.python_facts(); print(json.dumps([f, 'torch' in sys.modules]))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    facts, imported = json.loads(found.stdout)
    assert facts["missing"] == [] and not imported


def test_the_hosts_requirements_are_the_tutors_own_but_the_apps():
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.M | re.S)[1]
    declared = {re.split(r"[;\[]", item)[0].strip() for item in re.findall(r'"([^"]+)"', block)}
    # the app's (its views, its file watching), never imported by a run
    app = {"textual", "watchfiles>=0.21", "tree-sitter-c>=0.23", "tree-sitter-cpp>=0.23"}
    assert set(HOST_REQUIREMENTS) == {item.replace(" ", "") for item in declared} - app


def test_the_steps_and_refusals_are_said_in_the_learners_words():
    assert messages.progress("box", Progress("venv", "/c/env")) == (
        "box: making the tutor's Python environment in /c/env"
    )
    assert messages.progress("box", Progress("pip", "Collecting torch")) == "box: Collecting torch"
    old = messages.ended("box", "", ship.TOO_OLD, ["tutor-remote: python 3.8"])
    assert "python3 on box is Python 3.8; the tutor needs 3.10 or newer" in old
    assert "box has no python3" in messages.ended("box", "", ship.NOT_FOUND, ["not found"])
    assert "BatchMode" in messages.ended("box", "", messages.SSH_FAILED, ["Permission denied"])
    assert messages.busy("box", [[1, 2**30], [2, 2**30]]).startswith(
        "box: 2 other processes are using the GPU (2.0 GiB)"
    )


# ---- what the tutor runs on this machine ------------------------------------------------------


def test_the_ssh_command_has_no_terminal_no_password_prompt_and_keep_alives(monkeypatch):
    monkeypatch.setattr(ssh, "effective_settings", lambda program, host: {})
    monkeypatch.setenv("TUTOR_SSH_CONTROL", "/tmp/c")
    command = ssh.ssh_command("me@box", "python3 -c x")
    assert command[:2] == ["ssh", "-T"] and command[-3:] == ["--", "me@box", "python3 -c x"]
    options = dict(o.split("=", 1) for o in command[command.index("-T") + 1 : -3] if "=" in o)
    assert options["BatchMode"] == "yes" and options["ServerAliveInterval"] == "15"
    assert options["ControlMaster"] == "auto" and options["ControlPath"] == "/tmp/c/tutor-%C"
    monkeypatch.setattr(ssh, "effective_settings", lambda p, h: {"controlmaster": "auto"})
    assert "ControlMaster=auto" not in ssh.ssh_command("box", "x")  # the learner's own, kept
    monkeypatch.setattr(ssh.sys, "platform", "win32")
    monkeypatch.setattr(ssh, "effective_settings", lambda p, h: {})
    assert not any("Control" in part for part in ssh.ssh_command("box", "x"))


def test_the_bootstrap_travels_in_a_command_any_shell_passes_on(tmp_path):
    command = ship.remote_command()
    assert re.fullmatch(r"python3 -c 'import base64,zlib;exec\(.*\)'", command)
    assert "'" not in command[12:-1] and len(command) < 30_000  # Windows' command line: 32 K
    assert ship.remote_command("~/envs/k/bin/python").startswith("~/envs/k/bin/python -c ")
    assert ship.remote_command("/a b/python").startswith("'/a b/python' -c ")
    # The loader reads the bootstrap from memory: an empty line on its input ends it at once.
    done = subprocess.run(
        ["sh", "-c", command], input=b"\n", capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr


def test_the_course_remembers_its_host_and_forgets_it_with_local(tmp_path):
    state = tmp_path / ".tutor"
    assert target.choose(None, None, state, {}) is None
    chosen = target.choose("me@box", "/opt/py/bin/python", state, {})
    target.remember(state, chosen)
    assert target.choose(None, None, state, {}) == target.Target("me@box", "/opt/py/bin/python")
    assert target.choose(None, None, state, {"TUTOR_REMOTE": "other"}) == target.Target("other")
    assert target.choose("local", None, state, {}) is None
    with pytest.raises(target.TargetError, match="not a host name ssh takes"):
        target.choose("-oProxyCommand=touch /tmp/x", None, state, {})


NO_KERNEL_MODULES = """
import subprocess, sys, types  # subprocess first: it tells Windows by msvcrt, faked below
class Missing:
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {"torch", "triton", "fcntl"}:
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Missing())
msvcrt = types.ModuleType("msvcrt")  # Windows' file locks, where fcntl is not
msvcrt.LK_LOCK, msvcrt.LK_UNLCK, msvcrt.locking = 1, 0, lambda fd, mode, size: None
sys.modules["msvcrt"] = msvcrt
sys.argv = ["tutor", *sys.argv[1:]]
from tutor.cli import main
raise SystemExit(main())
"""


def test_a_machine_without_torch_or_triton_is_told_how_to_reach_a_gpu(course, tmp_path):
    """As on Windows (or macOS): no torch, no triton, no fcntl; the tutor starts, and a
    command that would run kernels here says how to run them on a GPU over ssh."""
    script = tmp_path / "laptop.py"
    script.write_text(NO_KERNEL_MODULES)
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, str(script), "--root", str(course.root), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    listed = run("list")
    assert listed.returncode == 0 and "t1" in listed.stdout, listed.stderr
    checked = run("check", "t1")
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    assert "this machine cannot import torch, triton" in checked.stderr
    assert "tutor --on user@host check t1" in checked.stderr
    hinted = run("hint", "t1")
    assert hinted.returncode == 0, hinted.stderr


def test_python_without_on_is_a_usage_error(course):
    from cli_helpers import tutor

    out = tutor(course, "--python", "/usr/bin/python3", "check", "t1")
    assert out.returncode == 2 and "give --on HOST with it" in out.stderr


def test_a_shared_gpu_is_said_before_any_timing(monkeypatch):
    """Other processes on the GPU are named before the bench times anything; the tutor's own
    (a run, or its warm process's spare) are not others."""
    from tutor.bench import child
    from tutor.run import gpu

    # Read its first line before looking: until the child's program runs, /proc shows the
    # environment it was forked with (or none, mid-exec), without TUTOR_RUN_ID.
    ours = subprocess.Popen(
        [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(60)"],
        env=dict(os.environ, TUTOR_RUN_ID="x"),
        stdout=subprocess.PIPE,
    )
    assert ours.stdout is not None and ours.stdout.readline() == b"started\n"
    try:
        monkeypatch.setattr(
            gpu,
            "gpu_processes",
            lambda: [gpu.GpuProcess(0, 3 * 2**30), gpu.GpuProcess(ours.pid, 1)],
        )
        said = child._shared_gpu()
    finally:
        ours.kill()
        ours.wait()
        ours.stdout.close()
    assert said.startswith("the GPU is shared: 1 other process(es) (in other containers) hold 3.0")
    monkeypatch.setattr(gpu, "gpu_processes", lambda: [])
    assert child._shared_gpu() == ""
