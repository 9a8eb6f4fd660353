"""What a CUDA C++ kernel's run shows beyond its outputs, named: the evidence for a diagnosis.

Three witnesses, each with the line of the learner's file:
- the CPU scheduler (tutor_cuda.h): a barrier not every thread reaches, a shuffle whose mask
  names lanes that never call it;
- ThreadSanitizer, in the `races` build: two threads touch one address with no barrier (or
  atomic) between them: shared memory (a `__shared__` array: a missing `__syncthreads`) or
  global memory (threads of different blocks: a missing atomic);
- AddressSanitizer, in the `memory` build: an access past a buffer the launch was given, or
  past a `__shared__` array.

    evidence = read(ran, "c2_rmsnorm.cu")   # [Evidence(diagnosis, line, message), ...]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tutor.course import diagnoses as dx
from tutor.kernels.cuda.cpu.launch import Ran
from tutor.lang.i18n import N_, _

_RACE = re.compile(r"WARNING: ThreadSanitizer: data race")
_ACCESS = re.compile(r"^\s*(Previous )?(?:atomic )?(write|read) of size (\d+) at", re.I)
_FRAME = re.compile(r"^\s*#\d+ .*?([^\s/]+):(\d+)(?::\d+)?(?:\s|$)")
_LOCATION = re.compile(r"^\s*Location is (global|heap|stack)")
_GLOBAL_NAME = re.compile(r"global '([^']+)'")
_ASAN = re.compile(r"ERROR: AddressSanitizer: ([\w-]+)")
_ASAN_ACCESS = re.compile(r"^(READ|WRITE) of size (\d+)")
_ASAN_GLOBAL = re.compile(r"global variable '([^']+)' defined in '[^:']*?([^/:']+):(\d+)")
_ACCESSES = {"write": N_("a write"), "read": N_("a read")}
_SCHEDULER = {
    "barrier-divergent": dx.BARRIER_DIVERGENT,
    "shuffle-mask": dx.SHUFFLE_MASK,
    "not-started": dx.NOT_WRITTEN,
}


@dataclass(frozen=True)
class Evidence:
    diagnosis: str
    line: int | None
    message: str


def read(ran: Ran, file_name: str) -> list[Evidence]:
    """Everything `ran` shows about the learner's file `file_name`, most telling first."""
    found = [
        Evidence(
            _SCHEDULER.get(f.kind, dx.BARRIER_DIVERGENT),
            f.line or None,
            (
                _("{file}:{line}: the kernel is not written yet ({what})")
                if f.kind == "not-started"
                else _("{file}:{line}: {what}")
            ).format(file=file_name, line=f.line, what=f.text),
        )
        for f in ran.findings
    ]
    found += _races(ran.stderr, file_name)
    found += _overflows(ran.stderr, file_name)
    return found


def _races(log: str, file_name: str) -> list[Evidence]:
    found = []
    for report in _RACE.split(log)[1:]:
        accesses = []  # (previous?, kind, line)
        location, variable = "", ""
        lines = report.splitlines()
        for i, text in enumerate(lines):
            access = _ACCESS.match(text)
            if access:
                line = _first_frame_in(lines[i + 1 :], file_name)
                accesses.append((bool(access.group(1)), access.group(2).lower(), line))
            where = _LOCATION.match(text)
            if where and not location:
                location = where.group(1)
                named = _GLOBAL_NAME.search(text)
                variable = named.group(1).split("::")[-1] if named else ""
        if len(accesses) < 2 or not all(a[2] for a in accesses[:2]):
            continue
        (_first, kind_a, line_a), (_then, kind_b, line_b) = accesses[0], accesses[1]
        if location == "global":  # a function-level static: the kernel's __shared__ array
            message = _(
                "{file}: threads race on the __shared__ array {name}: {first} at line "
                "{line_a} and {second} at line {line_b} with no __syncthreads between them"
            )
            diagnosis = dx.MISSING_BARRIER
        else:  # a buffer the launch was given: global memory
            message = _(
                "{file}: threads race on global memory: {first} at line {line_a} and "
                "{second} at line {line_b} with nothing ordering them (threads of different "
                "blocks need an atomic)"
            )
            diagnosis = dx.MISSING_ATOMIC
        evidence = Evidence(
            diagnosis,
            min(line_a, line_b),
            message.format(
                file=file_name,
                name=variable or "?",
                first=_(_ACCESSES[kind_a]),
                second=_(_ACCESSES[kind_b]),
                line_a=line_a,
                line_b=line_b,
            ),
        )
        if evidence not in found:
            found.append(evidence)
    return found


def _overflows(log: str, file_name: str) -> list[Evidence]:
    error = _ASAN.search(log)
    if error is None:
        return []
    lines = log[error.end() :].splitlines()
    access = next((m for m in map(_ASAN_ACCESS.match, lines) if m), None)
    line = _first_frame_in(lines, file_name)
    what = _(_ACCESSES["read" if access is None or access.group(1) == "READ" else "write"])
    shared = _ASAN_GLOBAL.search(log)
    if error.group(1) == "global-buffer-overflow" and shared:
        return [
            Evidence(
                dx.SHARED_TOO_SMALL,
                line,
                _(
                    "{file}:{line}: {what} past the end of the __shared__ array {name} "
                    "(declared at line {declared}): it is smaller than the threads use"
                ).format(
                    file=file_name,
                    line=line,
                    what=what,
                    name=shared.group(1),
                    declared=shared.group(3),
                ),
            )
        ]
    return [
        Evidence(
            dx.OUT_OF_BOUNDS,
            line,
            _(
                "{file}:{line}: {what} outside the buffer it was given ({kind}): an index past "
                "n, or a bound that lets the last threads through"
            ).format(file=file_name, line=line, what=what, kind=error.group(1)),
        )
    ]


def _first_frame_in(lines: list[str], file_name: str) -> int | None:
    """The line of the first stack frame in the learner's file, before the next blank line."""
    for text in lines:
        if not text.strip():
            return None
        frame = _FRAME.match(text)
        if frame and frame.group(1) == file_name:
            return int(frame.group(2))
    return None
