"""The warm process: torch, triton, numpy and pytest imported once, each run forked from it.

    python -m tutor.run.zygote SOCKET_PATH cpu|cuda

A cold run pays 2 s (a 2-core machine) to 5 s (a GPU machine) to import torch and triton before
its first test; a run forked from this process starts with them loaded. It serves requests on a
Unix socket, one request per connection; a request carries the module to run (`pytest` for a
drill's tests, `tutor.bench.child` for a bench), its arguments, working folder, environment and
three file descriptors (SCM_RIGHTS): where the run's output goes, its events pipe and the pipe
holding its events key (tutor.run.seal). For each request this process forks a keeper
(tutor.run.keeper), which starts a session of its own (its own process group, as a cold keeper),
answers on the connection with its pid, and forks the run, which takes those descriptors and
runs the module. The tutor supervises the keeper exactly as a cold one (tutor.run.warm), by its pid:
time and memory limits, cancel, the run mark, everything it leaves behind. This process forgets
the connection once the keeper is forked: a warm process that dies, or is stopped, during a run
takes nothing of the run with it.

CPU and GPU runs are both served. CUDA does not survive a fork once it has started in the
parent, so this process never starts it: it imports torch and triton (which start nothing),
answers "is there a GPU" through NVML only (tutor.run.gpu, and PYTORCH_NVML_BASED_CUDA_CHECK for any
torch.cuda.is_available() on the way), and each forked run starts CUDA for itself. The imports
are audited (`cuda_audit`): the "ready" line says whether anything started CUDA, and the tutor
refuses to fork GPU runs from a process where something did. Whether a run uses the CPU
interpreter is fixed when this process starts (`cpu` or `cuda`): Triton's library functions
(tl.sum, tl.max, ...) are kernels defined when triton is imported, interpreted or compiled by
what TRITON_INTERPRET said then.

A run's first moments are mostly CUDA starting (half a second or more on a GPU machine), so this
process keeps the next run's processes forked ahead: a spare keeper, already in its own session,
whose child has started CUDA (`_prime`) and waits for a request. A request goes to the spare,
which becomes that run's keeper, and a new spare is forked at once; a spare that died, or whose
CUDA was started under other CUDA settings than the run asks for, gives way to a fresh fork, as
before. A spare that is never used dies with this process (PR_SET_PDEATHSIG), and its child with
it. TUTOR_WARM_SPARE=0 turns spares off (to measure what they save).

This process starts no thread before it forks, and each child sets its own thread counts. It
ends when the tutor that started it ends: it watches its parent between requests, and the kernel
kills it when that parent is gone (PR_SET_PDEATHSIG), also when it is stopped and watches
nothing. Its runs' keepers end their runs when their own tutor goes (tutor.run.keeper).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import os
import runpy
import select
import signal
import socket
import sys
from collections.abc import Iterator

from tutor.run import keeper
from tutor.run.protocol import (
    EVENTS_FD,
    KEY_FD,
    MAX_REQUEST,
    RUN_FDS,
    Ready,
    Refused,
    RunRequest,
)

WARM_CHILD = "TUTOR_WARM_CHILD"  # set in every run forked from here
# What a run may be: a drill's tests, a bench, or a drill's tests on the course's own files in
# one process (tutor dev check).
MODULES = ("pytest", "tutor.bench.child", "tutor.harness.batch")
SPARE = "TUTOR_WARM_SPARE"  # "0": no spare runs forked ahead
# A CUDA started under one of these is not the one a run that asks for other values would get.
# (The backend, TRITON_INTERPRET, is this process's own: a run on the other one starts cold.)
CUDA_SETTINGS = ("CUDA_", "NVIDIA_", "PYTORCH_CUDA", "PYTORCH_NO_CUDA", "TORCH_CUDA")
IDLE_CHECK_S = 0.5
REQUEST_TIMEOUT_S = 2.0  # a request is one message, sent right after connecting
PR_SET_PDEATHSIG = 1  # linux/prctl.h

# What a run would otherwise import for itself after the fork, every time (found by listing
# sys.modules before and after a run of each drill): beside pytest's own plugins, which each
# pytest.main loads, pdb and tomllib (pyproject.toml), which they load; torch's symbolic shapes
# with sympy, which torch._check imports on first use (torch.unravel_index in every failed
# comparison: 0.4 s of CPU a run); Triton's code generator and Gluon, which a kernel's first
# launch imports, and libdevice. None of them starts CUDA (cuda_audit checks it).
LAZY_IMPORTS = (
    "_pytest._argcomplete",
    "pdb",
    "tomllib",
    "torch.fx.experimental.symbolic_shapes",
)
# What every run imports itself: the drill tests' harness, its pytest plugin and the run's own
# (the event stream, the guard). Named, not imported here: they are what runs, this process
# only loads them ahead. Each kernel language preloads its own (tutor.kernels: `preload`).
RUN_IMPORTS = (
    "tutor.harness",
    "tutor.harness.drill_plugin",
    "tutor.run.child_guard",
    "tutor.run.pytest_events",
)


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


def _preload(backend: str) -> Ready:
    """Import what every run needs without starting CUDA; what was found about CUDA and GPUs."""
    from tutor import kernels

    cpu = backend == "cpu"
    for language in kernels.every():  # before torch, which may import a language's library
        os.environ.update(language.environment(cpu))
    # Any torch.cuda.is_available() on the way asks NVML, which does not start CUDA.
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    import numpy  # noqa: F401
    import torch

    with cuda_audit() as calls:
        import pytest  # noqa: F401

        for language in kernels.every():
            language.preload(cpu)
        for name in RUN_IMPORTS:
            importlib.import_module(name)
        from tutor.run.gpu import nvml_gpus

        _import_lazy_dependencies()

        gpus = nvml_gpus()

    # Everything imported so far lives as long as the process: frozen, it is never scanned
    # again by the garbage collector, in this process or in the runs forked from it (whose
    # collections would otherwise walk torch's whole heap, and touch its pages copy-on-write).
    gc.collect()
    gc.freeze()
    return Ready(
        backend,
        list(gpus or ()),
        cuda_started=bool(calls) or torch.cuda.is_initialized(),
        cuda_calls=calls,
    )


def _import_lazy_dependencies() -> None:
    """Import LAZY_IMPORTS and pytest's default plugins, so that no run imports them again."""
    from _pytest.config import default_plugins

    for name in (*(f"_pytest.{plugin}" for plugin in default_plugins), *LAZY_IMPORTS):
        try:
            importlib.import_module(name)
        except ImportError:  # tomllib before Python 3.11: a run imports what it needs itself
            continue


def serve(path: str, backend: str, parent: int) -> None:
    _die_with(parent)
    facts = _preload(backend)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    server.bind(path)
    server.listen(16)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select; keepers reaped below
    clients: dict[int, socket.socket] = {}
    spares = os.environ.get(SPARE) != "0" and not facts.cuda_started
    spare: socket.socket | None = None
    print(facts.line(), flush=True)
    try:
        while os.getppid() == parent:
            if spares and spare is None:
                spare = _fork_spare(backend, [server, wake_read, wake_write, *clients.values()])
            ready, _, _ = select.select(
                [server, wake_read, *clients.values()], [], [], IDLE_CHECK_S
            )
            for item in ready:
                if item is server:
                    conn, _ = server.accept()
                    conn.settimeout(REQUEST_TIMEOUT_S)  # a client that stalls stalls nobody else
                    clients[conn.fileno()] = conn
                elif item == wake_read:
                    os.read(wake_read, 4096)
                else:
                    inherited = [server, wake_read, wake_write, *clients.values()]
                    if spare is not None:
                        inherited.append(spare)
                    if _handle(item, inherited, facts.cuda_started, spare):
                        spare.close()  # this run's keeper now (or dead): the next is forked
                        spare = None
                    del clients[item.fileno()]
                    item.close()  # one request per connection: the keeper has its own copy
            _reap()
    finally:
        server.close()
        if os.path.exists(path):
            os.unlink(path)


def _die_with(parent: int | None) -> None:
    """Have the kernel kill this process when `parent` (the tutor that started it) ends; None:
    no longer.

    The tutor starts this process from a thread that lives as long as its WarmPool, because the
    signal comes when the thread that forked this process ends.
    """
    death = 0 if parent is None else signal.SIGKILL
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, death, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the watch between requests remains
        pass
    if parent is not None and os.getppid() != parent:  # it ended before the line above
        os._exit(0)


def _handle(
    conn: socket.socket, inherited: list, cuda_started: bool, spare: socket.socket | None = None
) -> bool:
    """Serve the one request on `conn`: hand it to the spare, or fork its keeper, or say why
    not; whether the spare is used up."""
    try:
        data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, RUN_FDS)
    except OSError:
        return False
    request = RunRequest.decode(data)
    if cuda_started:  # a fork would inherit a CUDA it cannot use
        refused = "CUDA started in the warm process"
    elif request is None or len(fds) != RUN_FDS:
        refused = "not a request this warm process reads"
    else:
        refused = ""
    if refused:  # said, so that the tutor runs it cold at once
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(Refused(refused).encode())
        except OSError:
            pass  # the client is gone already
        return False
    # A spare that cannot take it has died: it is used up either way, and replaced.
    if spare is None or not _hand_over(spare, data, [conn.fileno(), *fds]):
        pid = os.fork()
        if pid == 0:  # the keeper
            try:
                _keeper(conn, request, fds, inherited)
            finally:
                os._exit(70)
    for fd in fds:
        os.close(fd)
    return spare is not None


def _hand_over(channel: socket.socket, data: bytes, fds: list[int]) -> bool:
    """Send a request and its descriptors down `channel`; whether it went (not a dead end)."""
    try:
        socket.send_fds(channel, [data], fds)
    except OSError:
        return False
    return True


def _fork_spare(backend: str, inherited: list) -> socket.socket | None:
    """Fork the next run's keeper ahead of its request, and its primed run; the zygote's end of
    the channel the request will come down (None if the fork failed: runs fork as before)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        return None
    if pid == 0:
        try:
            ours.close()
            _spare_keeper(theirs, backend, inherited)
        finally:
            os._exit(70)
    theirs.close()
    return ours


def _spare_keeper(channel: socket.socket, backend: str, inherited: list) -> None:
    """A spare keeper: its own session, its primed run forked, then the request it is sent."""
    zygote = os.getppid()
    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _die_with(zygote)  # unused, it goes when the warm process goes
    _close_all(inherited)
    to_run, run_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    primed_env = _cuda_settings(os.environ)
    try:
        primed = os.fork()
    except OSError:
        primed = None
    if primed == 0:
        try:
            channel.close()
            to_run.close()
            _primed_run(run_end, backend)
        finally:
            os._exit(70)
    run_end.close()
    try:
        data, fds, _, _ = socket.recv_fds(channel, MAX_REQUEST, RUN_FDS + 1)
    except OSError:
        data, fds = b"", []
    if not data or len(fds) != RUN_FDS + 1:
        os._exit(0)  # the warm process is gone: the primed run goes with this process
    _die_with(None)  # a run's keeper outlives the warm process (its tutor ends it)
    channel.close()
    conn, run_fds = socket.socket(fileno=fds[0]), fds[1:]
    request = RunRequest.decode(data)
    if request is None:
        os._exit(0)
    asked = _cuda_settings(request.env)

    # The run's descriptors stay open here until keeper.keep lets go of everything but its own.
    def start(drop: set[int]) -> int:
        if primed and asked == primed_env and _hand_over(to_run, data, run_fds):
            run = primed
        else:  # no primed run, or one primed for other settings: fork one, as _keeper does
            if primed:
                os.kill(primed, signal.SIGKILL)
                os.waitpid(primed, 0)
            run = _fork_run(request, run_fds, drop | {to_run.fileno()})
        to_run.close()
        return run

    keeper.keep(conn, start, request.env.get(keeper.RUN_ID, ""))


def _primed_run(channel: socket.socket, backend: str) -> None:
    """The spare's run: CUDA started (on a GPU), then the request it waits for, run."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _die_with(os.getppid())  # unused, it goes with its spare keeper
    if backend == "cuda":
        _prime()
    try:
        data, fds, _, _ = socket.recv_fds(channel, MAX_REQUEST, RUN_FDS)
    except OSError:
        data, fds = b"", []
    if not data or len(fds) != RUN_FDS:
        os._exit(0)
    _die_with(None)  # from now on it is a run: it ends as any run does (tutor.run.keeper)
    channel.close()
    request = RunRequest.decode(data)
    if request is None:
        os._exit(0)
    _child(request, fds, set())


def _prime() -> None:
    """Start CUDA in this (forked) process, and each kernel language's launch path with it, as
    a run's first kernel would (tutor.kernels: `prime`)."""
    from tutor import kernels

    for language in kernels.every():
        language.prime()


def _keeper(conn: socket.socket, request: dict, fds: list[int], inherited: list) -> None:
    """A keeper forked from here: its own session, none of this process's sockets, the run."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    _close_all(item for item in inherited if item is not conn)
    keeper.keep(
        conn, lambda drop: _fork_run(request, fds, drop), request.env.get(keeper.RUN_ID, "")
    )


def _fork_run(request: dict, fds: list[int], drop: set[int]) -> int:
    """Fork the run itself (tutor.run.keeper's start_run); its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            _child(request, fds, drop)
        finally:
            os._exit(70)
    return pid


def _close_all(items) -> None:
    """Close each socket or descriptor of `items` in this (forked) process."""
    for item in items:
        try:
            item.close() if hasattr(item, "close") else os.close(item)
        except OSError:
            pass


def _cuda_settings(env) -> dict[str, str]:
    """The variables of `env` that decide which CUDA a process starts (CUDA_SETTINGS)."""
    return {k: v for k, v in env.items() if k.startswith(CUDA_SETTINGS)}


def _child(request: RunRequest, fds: list[int], drop: set[int]) -> None:
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in drop:  # the keeper's channel and wake-up pipe
        try:
            os.close(fd)
        except OSError:
            pass
    output, events, key = fds
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.dup2(events, EVENTS_FD)
    os.dup2(key, KEY_FD)
    placed = {0, 1, 2, EVENTS_FD, KEY_FD}
    for fd in {output, events, key, devnull} - placed:
        os.close(fd)
    os.environ.clear()
    os.environ.update(request.env, **{WARM_CHILD: "1"})
    os.chdir(request.cwd)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    import torch

    torch.set_num_threads(
        max(1, int(request.env.get("OMP_NUM_THREADS", "0")) or (os.cpu_count() or 1))
    )
    code = _run_module(request.module, request.args) if request.module in MODULES else 2
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


def _reap() -> None:
    """Collect every keeper that ended (they report to their tutors themselves)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], int(sys.argv[3]))
