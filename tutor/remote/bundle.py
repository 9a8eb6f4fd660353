"""The tutor's side of the bundle: the files a run on a remote host needs, by their hashes, and
where each path of a run's command is on the host.

    bundle = Bundle(paths)
    first = bundle.manifest()                 # Files naming every file: the host says what it lacks
    more = bundle.contents(need.shas)         # ... and gets those
    bundle.attach(welcome.root, welcome.python)
    prepared = bundle.prepare(cmd, env, cwd, returns)   # before each run

What travels: the tutor package itself (so the host runs the learner's version of it), the
course's catalogue, drills/ and hints/, and any file a run's command names (the learner's file,
a mutant built under .tutor/, a file given with --impl from anywhere). Each is known by the
sha256 of its content, read again only when its size, time or inode changed; once the host has
a file as it is here, it is not sent again. A file from outside the course goes to a folder of
its own under the course's .tutor/ there.

A run's command, folder and environment are rewritten for the host: paths in the course (or the
tutor package) point into the course's folder there, `python` is the host's, and the
environment carries only what the tutor set for the run (and the learner's TUTOR_ settings a
run reads), never the rest of this machine's. Paths the host writes back (in its output and
events) are turned into this machine's again.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tutor.course.paths import CoursePaths
from tutor.remote.protocol import Files, pack

PACKAGE = Path(__file__).resolve().parents[1]  # the tutor package this process runs
CATALOGUES = "drills*.yaml"
COURSE_FOLDERS = ("drills", "hints")
PACKAGE_SUFFIXES = (
    ".py",
    ".mo",
    ".h",
)  # its code, its compiled translations, the CUDA-on-CPU headers
SKIPPED = ("__pycache__",)
OUTSIDE = ".tutor/remote/outside"  # files from outside the course, on the host
RETURNS = ".tutor/remote/returns"  # files a run writes for the tutor to read
LIST_VARIABLES = ("PYTHONPATH",)  # path lists: each part translated, parts only here dropped
HERE_ONLY = ("TUTOR_SSH", "TUTOR_REMOTE", "TUTOR_ROOT", "TUTOR_TORCH_INDEX")  # not for runs


def course_name(root: Path) -> str:
    """The course's folder name on a host: this machine's name and the course's path, hashed,
    so two courses (or two machines) never share one."""
    return hashlib.sha256(f"{socket.gethostname()}:{root}".encode()).hexdigest()[:12]


@dataclass
class Prepared:
    """One run, as the host must see it."""

    files: Files | None  # what changed since the host last had it (None: nothing)
    cmd: list[str]
    cwd: str
    env: dict[str, str]
    unset: list[str]
    returns: dict[str, Path] = field(default_factory=dict)  # host path -> this machine's


class Bundle:
    def __init__(self, paths: CoursePaths, package: Path = PACKAGE) -> None:
        self.root = paths.root
        self.package = package
        self.remote_root = ""
        self.python = ""
        self.placed: dict[str, str] = {}  # host path (relative) -> sha256 it has there now
        self.host_has: set[str] = set()  # contents the host's store holds
        self.sent_files = 0  # contents sent so far (for the tests and the measurements)
        self.sent_bytes = 0
        self._hashes: dict[Path, tuple[tuple[int, int, int], str]] = {}
        self._outside: dict[str, str] = {}  # a file outside the course -> its host path

    # ---- which files, by hash ----------------------------------------------------------------

    def local_files(self) -> dict[str, Path]:
        """Every file every run may read, by its path under the course's folder on the host."""
        found: dict[str, Path] = {}
        for catalogue in sorted(self.root.glob(CATALOGUES)):  # drills.yaml, drills.zh.yaml
            found[catalogue.name] = catalogue
        for folder in COURSE_FOLDERS:
            for path in _files(self.root / folder):
                found[path.relative_to(self.root).as_posix()] = path
        for path in _files(self.package):
            if path.suffix in PACKAGE_SUFFIXES:
                found[f"tutor/{path.relative_to(self.package).as_posix()}"] = path
        return found

    def sha(self, path: Path) -> str:
        """The sha256 of `path`'s content, read again only when the file changed."""
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        known = self._hashes.get(path)
        if known is not None and known[0] == key:
            return known[1]
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        self._hashes[path] = (key, digest)
        return digest

    def _hashed(self, files: dict[str, Path]) -> dict[str, str]:
        """Each file's sha256 by its path on the host; a file that cannot be read (a broken
        link, gone since it was listed) is left out."""
        hashed = {}
        for relative, path in files.items():
            try:
                hashed[relative] = self.sha(path)
            except OSError:
                continue
        return hashed

    def manifest(self) -> Files:
        """Every file of the bundle by name and hash: the host answers with what it lacks."""
        self._entries = self._hashed(self.local_files())
        return Files(entries=self._entries)

    def contents(self, shas: list[str]) -> Files:
        """The contents of `shas` (the host's answer to `manifest`)."""
        by_sha = {sha: rel for rel, sha in self._entries.items()}
        local = self.local_files()
        blobs = {sha: self._read(local[by_sha[sha]]) for sha in shas if sha in by_sha}
        return Files(blobs=blobs)

    def attach(self, remote_root: str, python: str) -> None:
        """The host has placed `manifest`'s files in `remote_root`; runs use `python`."""
        self.remote_root, self.python = remote_root.rstrip("/"), python
        self.placed = dict(self._entries)
        self.host_has = set(self._entries.values())

    def _read(self, path: Path) -> str:
        data = path.read_bytes()
        self.sent_files += 1
        self.sent_bytes += len(data)
        return pack(data)

    # ---- a run's command, as the host sees it ------------------------------------------------

    def prepare(
        self, cmd: list[str], env: dict[str, str], cwd: Path, returns: list[Path]
    ) -> Prepared:
        named: dict[str, Path] = {}
        run_returns = {}
        if returns:
            folder = f"{RETURNS}/{uuid.uuid4().hex[:12]}"
            for path in returns:
                remote = f"{self.remote_root}/{folder}/{path.name}"
                self._outside[str(path)] = remote
                run_returns[remote] = path
        args = [self.python] + [self._argument(arg, named) for arg in cmd[1:]]
        forwarded, unset = self._environment(env)
        every = {**self.local_files(), **named}
        entries = self._hashed(every)
        changed = {rel: sha for rel, sha in entries.items() if self.placed.get(rel) != sha}
        blobs = {}
        for rel, sha in changed.items():
            if sha not in self.host_has:
                blobs[sha] = self._read(every[rel])
                self.host_has.add(sha)
        self.placed.update(changed)
        for path in returns:
            self._outside.pop(str(path), None)
        return Prepared(
            Files(changed, blobs) if changed else None,
            args,
            self.to_remote(str(cwd)) or self.remote_root,
            forwarded,
            unset,
            run_returns,
        )

    def _argument(self, arg: str, named: dict[str, Path]) -> str:
        """`arg` with the path in it (the whole, or the value of `--option=PATH`) for the host;
        a file it names is added to `named`."""
        option, equals, value = arg.partition("=") if arg.startswith("-") else ("", "", arg)
        mapped = self._path(value, named)
        if mapped is None:
            return arg
        return f"{option}{equals}{mapped}"

    def _path(self, value: str, named: dict[str, Path]) -> str | None:
        """The host's path for a path of this machine, or None when `value` is not one."""
        if not value or not os.path.isabs(value):
            return None
        mapped = self.to_remote(value)
        path = Path(value)
        if mapped is not None:
            if path.is_file():
                named[mapped.removeprefix(self.remote_root + "/")] = path
            return mapped
        if not path.is_file():
            return None
        parent = hashlib.sha256(str(path.parent).encode()).hexdigest()[:12]
        relative = f"{OUTSIDE}/{parent}/{path.name}"
        self._outside[value] = f"{self.remote_root}/{relative}"
        named[relative] = path
        return self._outside[value]

    def to_remote(self, value: str) -> str | None:
        """The host's path for a path in the course or the package (or a file met before)."""
        if value in self._outside:
            return self._outside[value]
        for local, remote in self._prefixes():
            if value == local or value.startswith(local + os.sep):
                return remote + value[len(local) :].replace(os.sep, "/")
        return None

    def _prefixes(self) -> list[tuple[str, str]]:
        pairs = {str(self.root): self.remote_root}
        pairs.setdefault(str(self.package), f"{self.remote_root}/tutor")
        pairs.setdefault(str(self.package.parent), self.remote_root)
        return sorted(pairs.items(), key=lambda pair: -len(pair[0]))

    def _environment(self, env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
        """What the tutor set in `env` for the run (and the learner's TUTOR_ settings), for the
        host; and the variables it removed."""
        forwarded = {}
        for name, value in env.items():
            if os.environ.get(name) == value and not _forwarded_setting(name):
                continue
            if name in LIST_VARIABLES:
                parts = [self.to_remote(part) for part in value.split(os.pathsep) if part]
                value = ":".join(part for part in parts if part)
            elif os.path.isabs(value):
                value = self.to_remote(value) or value
            forwarded[name] = value
        return forwarded, sorted(name for name in os.environ if name not in env)

    # ---- the host's words, as this machine's -------------------------------------------------

    def _reverse(self) -> list[tuple[str, str]]:
        pairs = [(remote, local) for local, remote in self._prefixes() if remote]
        pairs += [(remote, local) for local, remote in self._outside.items()]
        return sorted(pairs, key=lambda pair: -len(pair[0]))

    def local_text(self, data: bytes) -> bytes:
        """The host's output with its paths as this machine's."""
        for remote, local in self._reverse():
            data = data.replace(remote.encode(), local.encode())
        return data

    def local_json(self, line: bytes) -> bytes:
        """A JSON line from the host with its paths as this machine's."""
        for remote, local in self._reverse():
            line = line.replace(json.dumps(remote)[1:-1].encode(), json.dumps(local)[1:-1].encode())
        return line


def _forwarded_setting(name: str) -> bool:
    """A TUTOR_ variable of the learner's that a run reads (the language, the memory limit);
    those that say how to reach the host stay here."""
    return name.startswith("TUTOR_") and not name.startswith(HERE_ONLY)


def _files(folder: Path) -> list[Path]:
    """The files under `folder`, the SKIPPED folders left out."""
    found = []
    for top, folders, names in os.walk(folder):
        folders[:] = sorted(name for name in folders if name not in SKIPPED)
        found += [Path(top, name) for name in sorted(names)]
    return found
