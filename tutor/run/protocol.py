"""The messages between the tutor and the processes of a run, each written and read here.

    tutor ──(start)──► warm process (tutor.run.zygote) ──(fork)──► keeper ──(fork)──► the run
      ▲                      │ Ready, first line of its output      │ Started, then Ended
      └── RunRequest over its Unix socket, with the run's three descriptors (SCM_RIGHTS);
          a Refused answer, or the keeper's messages on the same connection

- `Ready`: the warm process's first line on its standard output, once its imports are done:
  which backend it serves, the GPUs NVML sees, and whether anything started CUDA in it (then
  it forks no GPU run).
- `RunRequest`: one message on a fresh connection to the warm process's socket, the run's
  output, events and events-key descriptors beside it: the module to run (`pytest`, the bench
  child, a batch of a drill's files), its arguments, folder and environment.
- `Refused`: the warm process's answer when it cannot take the request (the run goes cold).
- `Started` / `Ended`: what a keeper (tutor.run.keeper), cold or warm, says on its channel: its
  pid once it leads the run's session, then how the run ended.

Every message is one JSON object on one line (a request is one datagram-sized message).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

# The run's descriptors, in the order a request carries them, and the numbers the run finds
# them at (the events pipe and its key; the output is the run's stdout and stderr).
EVENTS_FD = 200  # high, out of the way of whatever the run opens itself
KEY_FD = 201
RUN_FDS = 3  # output, events, events key
MAX_REQUEST = 1 << 20
RUN_FAILED_TO_START = 127  # Ended's returncode when the keeper could not fork the run


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _object(data: bytes | str) -> dict[str, Any] | None:
    try:
        found = json.loads(data)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


@dataclass(frozen=True)
class Ready:
    backend: str  # "cpu" or "cuda": what this process imported the kernel languages for
    gpus: list[str] = field(default_factory=list)
    cuda_started: bool = False  # something started CUDA here: no GPU run may be forked
    cuda_calls: list[str] = field(default_factory=list)  # what started it

    def line(self) -> str:
        return json.dumps({"ready": True, **asdict(self)})

    @classmethod
    def parse(cls, text: bytes | str) -> Ready | None:
        found = _object(text)
        if found is None or not found.get("ready"):
            return None
        return cls(
            str(found.get("backend", "")),
            list(found.get("gpus") or []),
            bool(found.get("cuda_started")),
            list(found.get("cuda_calls") or []),
        )


@dataclass(frozen=True)
class RunRequest:
    module: str  # run as `python -m MODULE ARGS`
    args: list[str]
    cwd: str
    env: dict[str, str]

    def encode(self) -> bytes:
        return json.dumps({**asdict(self), "events_fd": EVENTS_FD, "key_fd": KEY_FD}).encode()

    @classmethod
    def decode(cls, data: bytes) -> RunRequest | None:
        found = _object(data) if data else None
        if found is None:
            return None
        try:
            return cls(
                str(found["module"]), list(found["args"]), str(found["cwd"]), dict(found["env"])
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Refused:
    reason: str

    def encode(self) -> bytes:
        return _line({"refused": self.reason})


@dataclass(frozen=True)
class Started:
    pid: int  # the keeper's: it leads the run's process group

    def encode(self) -> bytes:
        return _line({"pid": self.pid})


@dataclass(frozen=True)
class Ended:
    pid: int  # the run's (-1 when it never started)
    returncode: int

    def encode(self) -> bytes:
        return _line({"exit": self.pid, "returncode": self.returncode})


def read_reply(line: bytes) -> Started | Refused | Ended | None:
    """The message in one line a keeper or the warm process wrote, or None for anything else."""
    found = _object(line)
    if found is None:
        return None
    if "refused" in found:
        return Refused(str(found["refused"]))
    if "returncode" in found:
        return Ended(int(found.get("exit", -1)), int(found["returncode"]))
    if "pid" in found:
        return Started(int(found["pid"]))
    return None
