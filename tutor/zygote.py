"""The warm process: torch, triton, numpy and pytest imported once, each run forked from it.

    python -m tutor.zygote SOCKET_PATH

A cold run pays about 2 s (more on a busy machine) to import torch and triton before its first
test; a run forked from this process starts with them loaded. It serves requests on a Unix
socket; each request carries the run's pytest arguments, working folder, environment and three
file descriptors (SCM_RIGHTS): where the child's output goes, and its events pipe. The forked
child starts a session of its own (its own process group, as a cold child), takes those
descriptors, and runs pytest; the tutor supervises it exactly as a cold child (tutor.warm), by
its pid: time and memory limits, cancel, the run mark, everything it leaves behind.

Only the CPU interpreter runs warm: CUDA does not survive a fork, so a GPU run stays cold.
This process starts no thread before it forks (the interpreter's imports start none), and each
child sets its own thread counts. It ends when the tutor that started it ends (it watches its
parent between requests) and takes its children along.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import sys

MAX_REQUEST = 1 << 20
FDS = 2  # output, events
IDLE_CHECK_S = 0.5


def _preload() -> None:
    """Import what every run needs, in the order a cold child would (interpreter first)."""
    os.environ["TRITON_INTERPRET"] = "1"
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import torch  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401

    import tutor.child_guard  # noqa: F401
    import tutor.drill_plugin  # noqa: F401
    import tutor.harness  # noqa: F401
    import tutor.pytest_events  # noqa: F401

    # Everything imported so far lives as long as the process: frozen, it is never scanned
    # again by the garbage collector, in this process or in the runs forked from it (whose
    # collections would otherwise walk torch's whole heap, and touch its pages copy-on-write).
    gc.collect()
    gc.freeze()


def serve(path: str) -> None:
    parent = os.getppid()
    _preload()
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
    print("ready", flush=True)
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
                    if not _handle(item, owners, [server, wake_read, wake_write, *clients]):
                        clients.pop(item.fileno(), None)
                        item.close()
            _reap(owners)
    finally:
        for pid in owners:
            _kill_group(pid)
        server.close()
        if os.path.exists(path):
            os.unlink(path)


def _handle(conn: socket.socket, owners: dict[int, socket.socket], inherited: list) -> bool:
    """Serve one request on `conn`; False when the connection closed."""
    try:
        data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, FDS)
    except OSError:
        return False
    if not data:
        return False
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
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    sys.argv = ["pytest", *request["args"]]
    import pytest
    import torch

    torch.set_num_threads(
        max(1, int(request["env"].get("OMP_NUM_THREADS", "0")) or (os.cpu_count() or 1))
    )
    code = pytest.main(request["args"])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


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
    serve(sys.argv[1])
