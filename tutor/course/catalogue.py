"""The course catalogue: drills.yaml loaded into typed, validated records.

The file has a format version, a list of tracks and a list of drills. Each drill names its
learner file; every other path (starter, solution, tests, lesson, hints, mutants, bench recipe)
is derived from it by `tutor.course.paths.CoursePaths`. Each drill declares its own mistakes (the
diagnosis ids its tests can name, beyond the generic ones of `tutor.course.diagnoses`) and the torch
operations that are its core work (`torch_core`: calling one is `torch-fallback`), and the
languages its lesson and hints exist in (`translations`, every language by default;
tutor.dev.translations). Errors name the file, the line, the drill and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.course.paths import CoursePaths
from tutor.course.yamlfile import YamlFileError, line_of, load_yaml
from tutor.lang.i18n import ENGLISH, LANGUAGES, N_, _

FORMAT_VERSION = 2
_ID = re.compile(r"^[a-z][a-z0-9_-]*$")
_FILE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
# The kernel languages a drill may be written in, and the suffix of a learner file in each. A
# language is the package of its name under tutor/kernels (tutor.kernels.language); a drill's
# entry may name its language, which its file's suffix must agree with.
KERNEL_LANGUAGES = {"triton": ".py", "cuda": ".cu"}
_DTYPES = {"float32", "float16", "bfloat16"}
_OPERATION = re.compile(r"^[a-z][a-z0-9_]*$")


class CatalogueError(YamlFileError):
    """drills.yaml is broken; the message says where and how."""


@dataclass(frozen=True)
class BenchCase:
    """One shape a drill's function is timed at (`tutor bench`)."""

    function: str
    shape: dict[str, int]
    dtype: str = "bfloat16"

    @property
    def label(self) -> str:
        dims = " ".join(f"{k}={v}" for k, v in self.shape.items())
        return f"{self.function} {dims} {self.dtype}"


@dataclass(frozen=True)
class Mistake:
    """A mistake a drill's tests can name: its diagnosis id and one line saying what it is."""

    id: str
    summary: str


@dataclass(frozen=True)
class Track:
    id: str
    title: str
    summary: str = ""


@dataclass(frozen=True)
class Drill:
    """One exercise: a learner file that must define `functions`, checked by its test file."""

    id: str
    track: str
    title: str
    file: str
    functions: tuple[str, ...]
    # The torch operations that do the drill's work (matched by name, tutor.harness.torch_calls):
    # a call to one while the learner's function runs is `torch-fallback`.
    torch_core: tuple[str, ...] = ()
    taught: str = ""
    coming: bool = False  # listed but not yet playable
    bench: tuple[BenchCase, ...] = field(default_factory=tuple)
    mistakes: tuple[Mistake, ...] = field(default_factory=tuple)
    # The drill's own perf diagnoses (its known levers, judged by its bench recipe's rules),
    # beside the ones every drill shares (tutor.bench.rules.PERF_IDS).
    perf: tuple[Mistake, ...] = field(default_factory=tuple)
    language: str = "triton"  # its kernels' language (KERNEL_LANGUAGES)
    # The languages its lesson and hints exist in (tutor.lang.i18n.LANGUAGES unless the entry says
    # otherwise: `translations: [en]` for a drill added English-first).
    translations: tuple[str, ...] = LANGUAGES

    @property
    def mistake_ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.mistakes)


@dataclass(frozen=True)
class Catalogue:
    tracks: tuple[Track, ...]
    drills: tuple[Drill, ...]
    paths: CoursePaths

    def drill(self, drill_id: str) -> Drill:
        """The drill named `drill_id`, in any case (`T3` is t3, as the lessons write it)."""
        for drill in self.drills:
            if drill.id == drill_id.lower():
                return drill
        known = ", ".join(d.id for d in self.drills)
        raise KeyError(
            _("no drill {drill} in {catalogue} (known: {known})").format(
                drill=repr(drill_id), catalogue=self.paths.catalogue, known=known
            )
        )

    def in_track(self, track_id: str) -> list[Drill]:
        return [d for d in self.drills if d.track == track_id]

    def next_after(self, drill_id: str) -> Drill | None:
        ids = [d.id for d in self.drills]
        later = self.drills[ids.index(drill_id) + 1 :] if drill_id in ids else self.drills
        return next((d for d in later if not d.coming), None)


UNKNOWN_KEY = N_("{what}: unknown key '{key}'")


class _Reader:
    """Validation helpers that know which file they read, for error messages."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, message: str, where: Any = None) -> CatalogueError:
        return CatalogueError(self.path, message, line_of(where))

    def mapping(self, value: Any, what: str, where: Any) -> dict:
        if not isinstance(value, dict):
            raise self.fail(
                _("{what} must be a mapping, got {kind}").format(
                    what=what, kind=type(value).__name__
                ),
                where,
            )
        return value

    def key(self, mapping: dict, key: str, kind: type, what: str, default: Any = ...) -> Any:
        if key not in mapping:
            if default is ...:
                raise self.fail(
                    _("{what}: missing key '{key}'").format(what=what, key=key), mapping
                )
            return default
        value = mapping[key]
        if kind is int and isinstance(value, bool) or not isinstance(value, kind):
            raise self.fail(
                _("{what}: key '{key}' must be {kind}, got {got}").format(
                    what=what, key=key, kind=kind.__name__, got=type(value).__name__
                ),
                mapping,
            )
        return value


def load_catalogue(paths: CoursePaths) -> Catalogue:
    """Read and validate drills.yaml under `paths.root`."""
    path = paths.catalogue
    try:
        data = load_yaml(path)
    except YamlFileError as exc:
        raise CatalogueError(exc.path, str(exc).split(": ", 1)[1], exc.line) from exc
    reader = _Reader(path)
    the_file = _("the file")
    data = reader.mapping(data, the_file, data)
    version = reader.key(data, "format", int, the_file)
    if version != FORMAT_VERSION:
        raise reader.fail(
            _("format {version} is not supported (this tutor reads {supported})").format(
                version=version, supported=FORMAT_VERSION
            )
        )
    tracks = tuple(_track(reader, t) for t in reader.key(data, "tracks", list, the_file))
    track_ids = {t.id for t in tracks}
    drills: list[Drill] = []
    for raw in reader.key(data, "drills", list, the_file):
        drill = _drill(reader, raw, track_ids)
        if any(d.id == drill.id for d in drills):
            raise reader.fail(_("drill '{id}' is listed twice").format(id=drill.id), raw)
        drills.append(drill)
    if not drills:
        raise reader.fail(_("no drills listed"))
    return Catalogue(tracks=tracks, drills=tuple(drills), paths=paths)


def _track(reader: _Reader, raw: Any) -> Track:
    raw = reader.mapping(raw, _("a track"), raw)
    track_id = reader.key(raw, "id", str, _("a track"))
    what = _("track '{id}'").format(id=track_id)
    return Track(
        track_id, reader.key(raw, "title", str, what), reader.key(raw, "summary", str, what, "")
    )


def _drill(reader: _Reader, raw: Any, track_ids: set[str]) -> Drill:
    raw = reader.mapping(raw, _("a drill"), raw)
    drill_id = reader.key(raw, "id", str, _("a drill"))
    what = _("drill '{id}'").format(id=drill_id)
    if not _ID.match(drill_id):
        raise reader.fail(
            _("{what}: key 'id' must be lower-case letters, digits, - or _").format(what=what), raw
        )
    track = reader.key(raw, "track", str, what)
    if track not in track_ids:
        raise reader.fail(
            _("{what}: key 'track' names unknown track '{track}'").format(what=what, track=track),
            raw,
        )
    file = reader.key(raw, "file", str, what)
    by_suffix = {suffix: name for name, suffix in KERNEL_LANGUAGES.items()}
    suffix = "." + file.rpartition(".")[2]
    if not _FILE.match(file) or suffix not in by_suffix:
        raise reader.fail(
            _(
                "{what}: key 'file' must be a bare file name (letters, digits, _ . -) ending in "
                "{suffixes}"
            ).format(what=what, suffixes=" or ".join(by_suffix)),
            raw,
        )
    language = reader.key(raw, "language", str, what, by_suffix[suffix])
    if language != by_suffix[suffix]:
        raise reader.fail(
            _("{what}: key 'language' must be {language}, the language of {file}").format(
                what=what, language=by_suffix[suffix], file=file
            ),
            raw,
        )
    functions = reader.key(raw, "functions", list, what)
    if not functions or not all(isinstance(f, str) and f.isidentifier() for f in functions):
        raise reader.fail(
            _("{what}: key 'functions' must list Python function names").format(what=what), raw
        )
    torch_core = reader.key(raw, "torch_core", list, what, [])
    if not all(isinstance(op, str) and _OPERATION.match(op) for op in torch_core):
        raise reader.fail(
            _(
                "{what}: key 'torch_core' must list torch operation names "
                "(lower-case, as torch spells them: matmul, softmax, layer_norm)"
            ).format(what=what),
            raw,
        )
    if len(set(torch_core)) != len(torch_core):
        raise reader.fail(
            _("{what}: an operation is listed twice in 'torch_core'").format(what=what), raw
        )
    bench = tuple(
        _bench(reader, case, what, functions) for case in reader.key(raw, "bench", list, what, [])
    )
    mistakes = tuple(
        _mistake(reader, item, what) for item in reader.key(raw, "mistakes", list, what, [])
    )
    ids = [m.id for m in mistakes]
    if len(set(ids)) != len(ids):
        raise reader.fail(
            _("{what}: a mistake is listed twice in 'mistakes'").format(what=what), raw
        )
    perf = tuple(_mistake(reader, item, what) for item in reader.key(raw, "perf", list, what, []))
    if len({m.id for m in perf}) != len(perf) or {m.id for m in perf} & set(ids):
        raise reader.fail(
            _("{what}: a perf diagnosis is listed twice, or also as a mistake").format(what=what),
            raw,
        )
    unknown = set(raw) - {
        "id",
        "track",
        "title",
        "file",
        "functions",
        "torch_core",
        "taught",
        "coming",
        "bench",
        "mistakes",
        "perf",
        "translations",
        "language",
    }
    if unknown:
        raise reader.fail(_(UNKNOWN_KEY).format(what=what, key=sorted(unknown)[0]), raw)
    translations = reader.key(raw, "translations", list, what, list(LANGUAGES))
    if ENGLISH not in translations or not set(translations) <= set(LANGUAGES):
        raise reader.fail(
            _(
                "{what}: key 'translations' lists the languages of its lesson and hints: "
                "{english} and any of {others}"
            ).format(what=what, english=ENGLISH, others=", ".join(LANGUAGES[1:])),
            raw,
        )
    return Drill(
        id=drill_id,
        track=track,
        title=reader.key(raw, "title", str, what),
        file=file,
        functions=tuple(functions),
        torch_core=tuple(torch_core),
        taught=reader.key(raw, "taught", str, what, ""),
        coming=reader.key(raw, "coming", bool, what, False),
        bench=bench,
        mistakes=mistakes,
        perf=perf,
        translations=tuple(translations),
        language=language,
    )


def _mistake(reader: _Reader, raw: Any, what: str) -> Mistake:
    raw = reader.mapping(raw, _("{what}: a mistake").format(what=what), raw)
    mistake_id = reader.key(raw, "id", str, _("{what} mistake").format(what=what))
    if not _ID.match(mistake_id):
        raise reader.fail(
            _("{what}: mistake id '{id}' must be lower-case letters, digits, - or _").format(
                what=what, id=mistake_id
            ),
            raw,
        )
    named = _("{what} mistake '{id}'").format(what=what, id=mistake_id)
    summary = reader.key(raw, "summary", str, named)
    unknown = set(raw) - {"id", "summary"}
    if unknown:
        raise reader.fail(_(UNKNOWN_KEY).format(what=named, key=sorted(unknown)[0]), raw)
    return Mistake(mistake_id, summary.strip())


def _bench(reader: _Reader, raw: Any, what: str, functions: list[str]) -> BenchCase:
    raw = reader.mapping(raw, _("{what}: a bench case").format(what=what), raw)
    bench = _("{what} bench").format(what=what)
    function = reader.key(raw, "function", str, bench)
    if function not in functions:
        raise reader.fail(
            _("{what}: bench function '{function}' is not in 'functions'").format(
                what=what, function=function
            ),
            raw,
        )
    shape = reader.key(raw, "shape", dict, bench)
    # 0 is allowed for flags such as `causal: 0`; sizes are checked by the drill's recipe.
    if not shape or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in shape.values()
    ):
        raise reader.fail(
            _("{what}: bench shape must map names to non-negative integers").format(what=what),
            raw,
        )
    dtype = reader.key(raw, "dtype", str, bench, "bfloat16")
    if dtype not in _DTYPES:
        raise reader.fail(
            _("{what}: bench dtype must be one of {dtypes}").format(
                what=what, dtypes=sorted(_DTYPES)
            ),
            raw,
        )
    return BenchCase(function, dict(shape), dtype)
