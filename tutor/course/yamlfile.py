"""Load YAML files so that every mapping remembers its line, for error messages that point at it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

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
    """A YAML file that cannot be read or does not have the expected shape."""

    def __init__(self, path: Path, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


def load_yaml(path: Path) -> Any:
    """Parse `path`; a syntax error becomes a YamlFileError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise YamlFileError(path, _("cannot read: {why}").format(why=exc.strerror)) from exc
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
