"""Read the course's files: text that must be UTF-8, and YAML whose every mapping remembers its
line, for error messages that point at it.

Every course file (drills.yaml, the hints, the lessons, their translations, the titles, the
stories) is read through `read_text`: a regular file of bounded size (tutor.course.files), in
UTF-8, or a YamlFileError naming the file and line, and the encoding it looks like when that is
cheap to tell (a translator's editor may save Chinese as GBK).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tutor.course.files import COURSE_LIMIT, read_regular
from tutor.lang.i18n import N_, _

NOT_YAML = N_("not valid YAML: {why}")  # why: PyYAML's own words ("could not find expected ':'")


class LineDict(dict):
    """A mapping from a YAML file that knows the (1-based) line it starts on."""

    line: int = 0


class _LineLoader(yaml.SafeLoader):
    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        mapping = LineDict(super().construct_mapping(node, deep=deep))
        mapping.line = node.start_mark.line + 1
        return mapping


_LineLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _LineLoader.construct_mapping
)


class YamlFileError(Exception):
    """A course file (YAML, or a lesson) that cannot be read or does not have the expected
    shape."""

    def __init__(self, path: Path, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


def read_text(path: Path) -> str:
    """The text of the course file `path`; a YamlFileError when it cannot be read, is not a
    regular file of bounded size, or is not UTF-8 (naming the line of the first wrong byte)."""
    try:
        data = read_regular(path, COURSE_LIMIT)
    except OSError as exc:
        raise YamlFileError(path, _("cannot read: {why}").format(why=exc.strerror)) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        looks = _looks_like(data)
        why = (
            _("not UTF-8 (it reads as {encoding}): save it as UTF-8").format(encoding=looks)
            if looks
            else _("not UTF-8 (byte 0x{byte:02x}): save it as UTF-8").format(byte=data[exc.start])
        )
        raise YamlFileError(path, why, line) from None


# Encodings an editor may have saved a course file in, tried in order when UTF-8 fails: the
# first that decodes the whole file is named (Chinese first: GBK is what a Chinese editor on
# Windows saves; cp1252 decodes almost anything, so it comes last).
_LIKELY = (("gbk", "GBK"), ("big5", "Big5"), ("cp1252", "Windows-1252"))


def _looks_like(data: bytes) -> str:
    """The name of the encoding `data` reads as, or "" when none of the likely ones fits."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    for codec, name in _LIKELY:
        try:
            data.decode(codec)
        except UnicodeDecodeError:
            continue
        return name
    return ""


def load_yaml(path: Path) -> Any:
    """Parse `path`; a syntax error becomes a YamlFileError naming the file and line."""
    text = read_text(path)
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise YamlFileError(path, _(NOT_YAML).format(why=exc.problem or exc), line) from exc
    except yaml.YAMLError as exc:
        raise YamlFileError(path, _(NOT_YAML).format(why=exc)) from exc


def line_of(value: Any) -> int | None:
    """The line a mapping started on, when it came from load_yaml."""
    return getattr(value, "line", None) or None
