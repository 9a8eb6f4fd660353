"""Track and drill titles in another language: `drills.<lang>.yaml` beside drills.yaml.

    format: 1
    tracks:
      T: {title: Triton 基础, summary: 每个 program 处理一个块或一行 ...}
    drills:
      t0: {title: 向量加法, taught: program_id、arange、偏移、掩码与 cdiv grid。}

Every id must be one drills.yaml has; a missing entry or key keeps the English. `localized`
gives the catalogue with these words in place, so the list, the app and the CLI's "Next:" line
all read them from the one record. Errors name the file and line.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tutor.course.catalogue import Catalogue, CatalogueError
from tutor.course.yamlfile import YamlFileError, line_of, load_yaml
from tutor.lang.i18n import ENGLISH, _

KEYS = {"tracks": ("title", "summary"), "drills": ("title", "taught")}


def titles_file(catalogue: Catalogue, lang: str) -> Path:
    return catalogue.paths.root / f"drills.{lang}.yaml"


def load_titles(catalogue: Catalogue, lang: str) -> dict[str, dict[str, dict[str, str]]]:
    """{"tracks": {id: {key: text}}, "drills": {...}} from drills.<lang>.yaml (empty when it is
    missing), validated against the catalogue."""
    path = titles_file(catalogue, lang)
    if not path.is_file():
        return {"tracks": {}, "drills": {}}
    try:
        data = load_yaml(path)
    except YamlFileError as exc:
        raise CatalogueError(exc.path, str(exc).split(": ", 1)[1], exc.line) from exc
    if not isinstance(data, dict) or data.get("format") != 1:
        raise CatalogueError(path, _("expected a mapping with 'format: 1'"), line_of(data))
    unknown = set(data) - {"format", *KEYS}
    if unknown:
        raise CatalogueError(
            path, _("unknown key '{key}'").format(key=sorted(unknown)[0]), line_of(data)
        )
    known = {
        "tracks": {t.id for t in catalogue.tracks},
        "drills": {d.id for d in catalogue.drills},
    }
    out: dict[str, dict[str, dict[str, str]]] = {}
    for section, keys in KEYS.items():
        entries = data.get(section) or {}
        if not isinstance(entries, dict):
            raise CatalogueError(
                path, _("'{section}' maps ids to titles").format(section=section), line_of(data)
            )
        out[section] = {}
        for entry_id, entry in entries.items():
            if entry_id not in known[section]:
                raise CatalogueError(
                    path,
                    _("{section}: '{id}' is not in {catalogue}").format(
                        section=section, id=entry_id, catalogue=catalogue.paths.catalogue.name
                    ),
                    line_of(entries),
                )
            if not isinstance(entry, dict) or not all(
                key in keys and isinstance(value, str) and value.strip()
                for key, value in entry.items()
            ):
                raise CatalogueError(
                    path,
                    _("{section}: '{id}' maps {keys} to text").format(
                        section=section, id=entry_id, keys=" and ".join(keys)
                    ),
                    line_of(entry) or line_of(entries),
                )
            out[section][entry_id] = {key: value.strip() for key, value in entry.items()}
    return out


def localized(catalogue: Catalogue, lang: str) -> Catalogue:
    """`catalogue` with its titles (and summaries, and what each drill teaches) in `lang`."""
    if lang == ENGLISH:
        return catalogue
    words = load_titles(catalogue, lang)
    tracks = tuple(replace(t, **words["tracks"].get(t.id, {})) for t in catalogue.tracks)
    drills = tuple(replace(d, **words["drills"].get(d.id, {})) for d in catalogue.drills)
    return replace(catalogue, tracks=tracks, drills=drills)
