"""Hint ladders: for each diagnosis, a title and three stages (nudge, pointer, fix).

Ladders come from `hints/<drill>.yaml`, falling back to `hints/common.yaml` for the ids every
drill shares. A diagnosis with no ladder anywhere gets the common `mismatch` ladder.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tutor.yamlfile import YamlFileError, line_of, load_yaml

COMMON = "common"
FALLBACK = "mismatch"


@dataclass(frozen=True)
class Ladder:
    diagnosis: str
    title: str
    stages: tuple[str, ...]


class HintFileError(YamlFileError):
    """A hints file with the wrong shape."""


@lru_cache(maxsize=32)
def _load(path: Path, mtime: float) -> dict[str, Ladder]:
    data = load_yaml(path)
    if not isinstance(data, dict) or data.get("format") != 1:
        raise HintFileError(path, "expected a mapping with 'format: 1'", line_of(data))
    ladders: dict[str, Ladder] = {}
    for diagnosis, raw in (data.get("diagnoses") or {}).items():
        stages = raw.get("stages") if isinstance(raw, dict) else None
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("title"), str)
            or not (isinstance(stages, list) and stages and all(isinstance(s, str) for s in stages))
        ):
            raise HintFileError(
                path,
                f"diagnosis '{diagnosis}' needs a 'title' and a list of 'stages'",
                line_of(raw),
            )
        ladders[diagnosis] = Ladder(
            diagnosis, raw["title"].strip(), tuple(s.strip() for s in stages)
        )
    return ladders


def drill_ladders(hints_dir: Path, name: str) -> dict[str, Ladder]:
    """The ladders of one hints file (`hints/<name>.yaml`) alone; none when it is missing."""
    path = hints_dir / f"{name}.yaml"
    return _load(path, path.stat().st_mtime) if path.is_file() else {}


class HintBook:
    """The ladders one drill can show."""

    def __init__(self, hints_dir: Path, drill_id: str) -> None:
        self.ladders: dict[str, Ladder] = {}
        for name in (COMMON, drill_id):  # the drill's own file overrides the common one
            self.ladders.update(drill_ladders(hints_dir, name))

    def ladder(self, diagnosis: str) -> Ladder:
        found = self.ladders.get(diagnosis) or self.ladders.get(FALLBACK)
        if found is None:
            return Ladder(diagnosis, diagnosis, ("Read the failing test's message.",))
        return found

    def title(self, diagnosis: str) -> str:
        found = self.ladders.get(diagnosis)
        return found.title if found else diagnosis
