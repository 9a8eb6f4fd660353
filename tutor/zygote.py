"""The warm process: torch, triton, numpy and pytest imported once, each run forked from it.

    python -m tutor.zygote SOCKET_PATH cpu|cuda

A cold run pays 2 s (a 2-core machine) to 5 s (a GPU machine) to import torch and triton before
its first test; a run forked from this process starts with them loaded. It serves requests on a
Unix socket; each request carries the module to run (`pytest` for a drill's tests,
`tutor.bench.child` for a bench), its arguments, working folder, environment and two file
descriptors (SCM_RIGHTS): where the child's output goes, and its events pipe. The forked child
starts a session of its own (its own process group, as a cold child), takes those descriptors,
and runs the module; the tutor supervises it exactly as a cold child (tutor.warm), by its pid:
time and memory limits, cancel, the run mark, everything it leaves behind.

CPU and GPU runs are both served. CUDA does not survive a fork once it has started in the
parent, so this process never starts it: it imports torch and triton (which start nothing),
answers "is there a GPU" through NVML only (tutor.gpu, and PYTORCH_NVML_BASED_CUDA_CHECK for any
torch.cuda.is_available() on the way), and each forked run starts CUDA for itself. The imports
are audited (`cuda_audit`): the "ready" line says whether anything started CUDA, and the tutor
refuses to fork GPU runs from a process where something did. Whether a run uses the CPU
interpreter is fixed when this process starts (`cpu` or `cuda`): Triton's library functions
(tl.sum, tl.max, ...) are kernels defined when triton is imported, interpreted or compiled by
what TRITON_INTERPRET said then.

This process starts no thread before it forks, and each child sets its own thread counts. It
ends when the tutor that started it ends (it watches its parent between requests) and takes
its children along.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import runpy
import select
import signal
import socket
import sys
from collections.abc import Iterator

WARM_CHILD = "TUTOR_WARM_CHILD"  # set in every run forked from here
MODULES = ("pytest", "tutor.bench.child")  # what a run may be: a drill's tests, or a bench
MAX_REQUEST = 1 << 20
FDS = 2  # output, events
IDLE_CHECK_S = 0.5


@contextlib.contextmanager
def cuda_audit() -> Iterator[list[str]]:
    """Record, in the list it yields, every call that would start CUDA in this process.

    torch starts CUDA in `torch.cuda._lazy_init` (any device query, any tensor on the GPU), and
    the CUDA runtime starts itself when torch counts devices without NVML
    (`torch._C._cuda_getDeviceCount`). Either one in the warm process would break every GPU
    run forked from it, so they are wrapped while the imports run.
    """
    import torch

    calls: list[str] = []
    targets = [(torch.cuda, "_lazy_init"), (torch._C, "_cuda_getDeviceCount")]
    saved = []
    for owner, name in targets:
        original = getattr(owner, name, None)
        if original is None:
            continue

        def recorded(*args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        saved.append((owner, name, original))
        setattr(owner, name, recorded)
    try:
        yield calls
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def _preload(backend: str) -> dict:
    """Import what every run needs without starting CUDA; what was found about CUDA and GPUs."""
    if backend == "cpu":  # before triton is imported: its library functions are interpreted
        os.environ["TRITON_INTERPRET"] = "1"
    # Any torch.cuda.is_available() on the way asks NVML, which does not start CUDA.
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    import numpy  # noqa: F401
    import torch

    with cuda_audit() as calls:
        import pytest  # noqa: F401
        import triton  # noqa: F401
        import triton.language  # noqa: F401

        import tutor.child_guard  # noqa: F401
        import tutor.drill_plugin  # noqa: F401
        import tutor.harness  # noqa: F401
        import tutor.harness.interpreter  # noqa: F401
        import tutor.pytest_events  # noqa: F401
        from tutor.gpu import nvml_gpus

        gpus = nvml_gpus()

    # Everything imported so far lives as long as the process: frozen, it is never scanned
    # again by the garbage collector, in this process or in the runs forked from it (whose
    # collections would otherwise walk torch's whole heap, and touch its pages copy-on-write).
    gc.collect()
    gc.freeze()
    return {
        "ready": True,
        "backend": backend,
        "gpus": list(gpus or ()),
        "cuda_started": bool(calls) or torch.cuda.is_initialized(),
        "cuda_calls": calls,
    }


def serve(path: str, backend: str) -> None:
    parent = os.getppid()
    facts = _preload(backend)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    server.bind(path)
    server.listen(16)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select; children reaped below
    clients: dict[int, socket.socket] = {}
    owners: dict[int, socket.socket] = {}  # child pid -> the connection that asked for it
    print(json.dumps(facts), flush=True)
    try:
        while os.getppid() == parent:
            ready, _, _ = select.select(
                [server, wake_read, *clients.values()], [], [], IDLE_CHECK_S
            )
            for item in ready:
                if item is server:
                    conn, _ = server.accept()
                    clients[conn.fileno()] = conn
                elif item == wake_read:
                    os.read(wake_read, 4096)
                else:
                    inherited = [server, wake_read, wake_write, *clients]
                    if not _handle(item, owners, inherited, facts["cuda_started"]):
                        clients.pop(item.fileno(), None)
                        item.close()
            _reap(owners)
    finally:
        for pid in owners:
            _kill_group(pid)
        server.close()
        if os.path.exists(path):
            os.unlink(path)


def _handle(
    conn: socket.socket, owners: dict[int, socket.socket], inherited: list, cuda_started: bool
) -> bool:
    """Serve one request on `conn`; False when the connection closed."""
    try:
        data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, FDS)
    except OSError:
        return False
    if not data:
        return False
    if cuda_started:  # a fork would inherit a CUDA it cannot use: the tutor runs it cold
        for fd in fds:
            os.close(fd)
        conn.sendall(json.dumps({"refused": "CUDA started in the warm process"}).encode() + b"\n")
        return True
    request = json.loads(data)
    pid = os.fork()
    if pid == 0:  # the run
        try:
            _child(request, fds, inherited)
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    owners[pid] = conn
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    return True


def _child(request: dict, fds: list[int], inherited: list) -> None:
    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for item in inherited:
        try:
            item.close() if hasattr(item, "close") else os.close(item)
        except OSError:
            pass
    output, events = fds
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.dup2(events, request["events_fd"])
    for fd in {output, events, devnull} - {0, 1, 2, request["events_fd"]}:
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"], **{WARM_CHILD: "1"})
    os.chdir(request["cwd"])
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    import torch

    torch.set_num_threads(
        max(1, int(request["env"].get("OMP_NUM_THREADS", "0")) or (os.cpu_count() or 1))
    )
    module = request.get("module", "pytest")
    code = _run_module(module, request["args"]) if module in MODULES else 2
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def restart_cold() -> None:
    """Turn this forked run into a cold one: the same pid, output and events, a fresh Python.

    For a run that finds it needs the other backend than the warm process imported triton for
    (NVML saw a GPU that torch cannot use). Does nothing outside a warm child.
    """
    if os.environ.get(WARM_CHILD) != "1":
        return
    del os.environ[WARM_CHILD]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", *sys.argv])


def _run_module(module: str, args: list[str]) -> int:
    """Run `python -m MODULE ARGS` in this process; its exit code."""
    sys.argv = [module, *args]
    if module == "pytest":
        import pytest

        return int(pytest.main(args))
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as done:
        if done.code is None:
            return 0
        return done.code if isinstance(done.code, int) else 1
    return 0


def _reap(owners: dict[int, socket.socket]) -> None:
    while owners:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = owners.pop(pid, None)
        if conn is not None:
            message = {"exit": pid, "returncode": os.waitstatus_to_exitcode(status)}
            try:
                conn.sendall(json.dumps(message).encode() + b"\n")
            except OSError:
                pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "cpu")
