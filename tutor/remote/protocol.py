"""The messages between the tutor and a remote host, each written and read here.

    tutor ──ssh -T HOST──► bootstrap (tutor.remote.bootstrap) ──exec──► agent (tutor.remote.agent)
      Hello ─►                          ◄─ Progress ..., then Welcome or Refusal
      Files (the bundle's names) ─►     ◄─ Need (the contents the host's store lacks)
      Files (those contents) ─►         ◄─ Synced, then from the agent: Serving
      Files (what changed), Run ─►      ◄─ Output ..., Event ..., Done
      Cancel, Ping ─►

The tutor writes on the ssh command's standard input, the host answers on its standard output,
one JSON object per line (`{"kind": "run", ...}`). Every line the host writes is sealed with the
key the tutor sent in `Hello` (tutor.run.seal), and the tutor drops any line whose seal does not
match: the learner's code runs on the host as the same user as the agent and could write to the
agent's output (/proc/PID/fd/1), but not in its words. Inside `Event`, a run's events are the
lines the run's own pytest plugin sealed with the run's key, checked by the host's supervisor.

This module, tutor.remote.bootstrap, tutor.remote.store, tutor.remote.hostenv, tutor.run.gpu
and tutor.run.seal use the standard library only: the host runs them before it has any
environment of the tutor's (tutor.remote.ship sends them in the ssh command itself).
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

PROTOCOL = 1  # raised whenever a message changes meaning; the host refuses another


def pack(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unpack(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


class _Message:
    KIND: ClassVar[str]

    def encode(self) -> bytes:
        return json.dumps({"kind": self.KIND, **asdict(self)}).encode() + b"\n"  # type: ignore[call-overload]


# ---- the tutor's ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hello(_Message):
    """The first line: who asks, and what the host must have ready."""

    KIND: ClassVar[str] = "hello"
    version: str  # the tutor's: the host's cache folder for it, and the bootstrap's own
    key: str  # hex: the key every line the host writes is sealed with
    course: str  # names the course's folder on the host (tutor.remote.bundle.course_name)
    python: str = ""  # the learner's own Python there (--python); "" to set one up
    cpu: bool = False  # the CPU interpreter on purpose (--cpu): no GPU needed
    warm: bool = False  # keep a warm process there for this session (the app, dev check)
    requirements: list[str] = field(default_factory=list)  # what a new environment installs
    torch_index: str = ""  # where torch comes from; "" to choose by the host's driver
    pip_args: list[str] = field(default_factory=list)  # added to every pip install
    cache: str = ""  # the host's cache folder; "" for ~/.cache/kernel-drills-tutor
    protocol: int = PROTOCOL


@dataclass(frozen=True)
class Files(_Message):
    """Files of the bundle: `entries` names where each goes (a path under the course folder on
    the host) by the sha256 of its content; `blobs` carries the contents the host may lack."""

    KIND: ClassVar[str] = "files"
    entries: dict[str, str] = field(default_factory=dict)  # path -> sha256
    blobs: dict[str, str] = field(default_factory=dict)  # sha256 -> base64 content


@dataclass(frozen=True)
class Run(_Message):
    """Start `cmd` under the host's supervisor (tutor.run.supervisor.supervise's arguments)."""

    KIND: ClassVar[str] = "run"
    id: str
    cmd: list[str]
    cwd: str
    env: dict[str, str]  # set on top of the agent's environment
    unset: list[str]  # and these removed from it
    timeout: float
    startup_timeout: float
    memory_limit: int
    events: bool  # whether the run writes sealed events (EVENTS_PATH in cmd)
    warm: bool  # fork it from the host's warm process when it can
    returns: list[str] = field(default_factory=list)  # files sent back in Done


@dataclass(frozen=True)
class Cancel(_Message):
    KIND: ClassVar[str] = "cancel"
    id: str


@dataclass(frozen=True)
class Ping(_Message):
    """Sent every few seconds: a host that hears nothing for long ends everything (the
    connection dropped without closing)."""

    KIND: ClassVar[str] = "ping"


# ---- the host's --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress(_Message):
    """What the host is doing while it sets itself up; `step` names it, `detail` is pip's own
    words or a path."""

    KIND: ClassVar[str] = "progress"
    step: str
    detail: str = ""


@dataclass(frozen=True)
class Refusal(_Message):
    """The host cannot run the tutor's kernels: `reason` names why, `facts` the numbers."""

    KIND: ClassVar[str] = "refusal"
    reason: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Welcome(_Message):
    """The host is set up: where the course goes, with which Python, on which GPUs."""

    KIND: ClassVar[str] = "welcome"
    root: str  # the course's folder on the host
    python: str  # the Python every run there starts
    python_version: str
    gpus: list[str]  # NVML's names ([] on a CPU-only host with --cpu)
    has_gpu: bool
    driver: str  # "570.124.06", or ""
    cuda: str  # the newest CUDA the driver runs ("12.8"), or ""
    memory: int  # bytes of memory on the host
    busy: list[list[int]] = field(default_factory=list)  # [pid, bytes] of other GPU processes
    platform: str = ""


@dataclass(frozen=True)
class Need(_Message):
    KIND: ClassVar[str] = "need"
    shas: list[str]


@dataclass(frozen=True)
class Synced(_Message):
    KIND: ClassVar[str] = "synced"
    placed: int  # files written into the course's folder (the rest were there)


@dataclass(frozen=True)
class Serving(_Message):
    """The agent is up: its pid, and the backend its warm process serves ("" with none)."""

    KIND: ClassVar[str] = "serving"
    pid: int
    warm_backend: str = ""


@dataclass(frozen=True)
class Output(_Message):
    KIND: ClassVar[str] = "output"
    id: str
    data: str  # base64 of the run's stdout and stderr, as read


@dataclass(frozen=True)
class Event(_Message):
    KIND: ClassVar[str] = "event"
    id: str
    line: str  # one event's JSON, its seal checked on the host


@dataclass(frozen=True)
class Done(_Message):
    """How the run ended (tutor.run.supervisor.Ended's fields), and the files it returns."""

    KIND: ClassVar[str] = "done"
    id: str
    how: str
    returncode: int
    error: str = ""
    peak_rss: int = 0
    timed: str = "run"
    warm: bool = False
    files: dict[str, str] = field(default_factory=dict)  # host path -> base64 content


Message = (
    Hello
    | Files
    | Run
    | Cancel
    | Ping
    | Progress
    | Refusal
    | Welcome
    | Need
    | Synced
    | Serving
    | Output
    | Event
    | Done
)
_BY_KIND: dict[str, type] = {
    kind.KIND: kind
    for kind in (
        Hello,
        Files,
        Run,
        Cancel,
        Ping,
        Progress,
        Refusal,
        Welcome,
        Need,
        Synced,
        Serving,
        Output,
        Event,
        Done,
    )
}


def decode(line: bytes | str) -> Message | None:
    """The message in one line, or None for anything else (a field missing or of the wrong
    kind included)."""
    try:
        raw = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    kind = _BY_KIND.get(raw.get("kind"))  # type: ignore[arg-type]
    if kind is None:
        return None
    known = {f.name: f for f in fields(kind)}
    try:
        message = kind(**{k: v for k, v in raw.items() if k in known})
    except TypeError:
        return None
    for name, spec in known.items():
        if not _fits(getattr(message, name), str(spec.type)):
            return None
    return message


_SIMPLE = {"str": str, "int": int, "float": (int, float), "bool": bool}


def _fits(value: Any, annotation: str) -> bool:
    """Whether `value` is of the field's annotated kind (the annotations are strings here)."""
    if annotation in _SIMPLE:
        return isinstance(value, _SIMPLE[annotation]) and not (
            annotation in ("int", "float") and isinstance(value, bool)
        )
    if annotation.startswith("list["):
        inner = annotation[5:-1]
        return isinstance(value, list) and (
            inner not in _SIMPLE or all(_fits(item, inner) for item in value)
        )
    if annotation.startswith("dict["):
        return isinstance(value, dict)
    return True
