"""`tutor dev check`'s rules for translations: never stale, never half.

For each language a drill's catalogue entry lists under `translations` (every language the
tutor speaks, unless it says `translations: [en]`), beside English:

- its lesson and hints file have a translation (tutor.course.translations) that records the sha256
  of the English file as it is now, else the check names the stale or missing file;
- the translated hints file has the same diagnosis ids as the English one, the same number of
  stages for each, the same `when:` patterns and `ways:`;
- drills.<lang>.yaml gives the drill a title (tutor.course.titles);
- the translated hints file's `stories:` map translates every story and output name the drill's
  tests can show (tutor.dev.stories: collected into drills/stories/<id>.yaml by running them,
  with the sha256 of the test file, so a test changed since is named too).

Once per check, for the languages any chosen drill lists: `hints/common.<lang>.yaml` by the same
rules, and drills.<lang>.yaml loads and titles every track.
"""

from __future__ import annotations

from pathlib import Path

from tutor.course import stories
from tutor.course.catalogue import Catalogue, CatalogueError, Drill
from tutor.course.hints import COMMON, HintFileError, Ladder, drill_ladders
from tutor.course.titles import load_titles, titles_file
from tutor.course.translations import Freshness, judge, sha256_of, translated_path
from tutor.course.yamlfile import YamlFileError
from tutor.dev import glossary
from tutor.lang.i18n import ENGLISH


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


ENGLISH_FIRST = " (a drill added English-first says `translations: [en]` in drills.yaml)"


def file_problem(source: Path, lang: str, root: Path, missing_note: str = "") -> str:
    """Why the `lang` translation of `source` cannot be shown ("" when it can)."""
    translation = judge(source, lang)
    path, english = _shown(translation.path, root), _shown(source, root)
    if translation.state is Freshness.MISSING:
        return f"{path} is missing{missing_note}"
    if translation.state is Freshness.STALE:
        return (
            f"{path} is stale: {english} changed since it was translated "
            "(docs/AUTHORING.md says how to refresh it)"
        )
    return translation.problem


def ladder_problems(hints_dir: Path, name: str, lang: str) -> list[str]:
    """Where the `lang` ladders of `hints/<name>.yaml` differ from the English in shape."""
    try:
        english = drill_ladders(hints_dir, name)
        translated = drill_ladders(hints_dir, name, lang)
    except HintFileError as exc:
        return [str(exc)]
    there = f"hints/{name}.{lang}.yaml"
    problems = []
    missing = [d for d in english if d not in translated]
    extra = [d for d in translated if d not in english]
    if missing:
        problems.append(f"{there} has no ladder for {', '.join(missing)}")
    if extra:
        problems.append(f"{there} has ladders hints/{name}.yaml does not: {', '.join(extra)}")
    for diagnosis, ladder in english.items():
        other = translated.get(diagnosis)
        if other is not None:
            problems.extend(_shape_problems(there, name, ladder, other))
    return problems


def _shape_problems(there: str, name: str, english: Ladder, other: Ladder) -> list[str]:
    problems = []
    if len(other.stages) != len(english.stages):
        problems.append(
            f"{there}: '{english.diagnosis}' has {len(other.stages)} stages, "
            f"hints/{name}.yaml {len(english.stages)}"
        )
    if list(other.when) != list(english.when):
        problems.append(
            f"{there}: '{english.diagnosis}' has when: {sorted(other.when) or 'none'}, "
            f"hints/{name}.yaml {sorted(english.when) or 'none'}"
        )
    if sorted(other.ways) != sorted(english.ways):
        problems.append(
            f"{there}: '{english.diagnosis}' has ways: {sorted(other.ways) or 'none'}, "
            f"hints/{name}.yaml {sorted(english.ways) or 'none'}"
        )
    return problems


def drill_findings(catalogue: Catalogue, drill: Drill) -> list[tuple[str, bool, str]]:
    """(subject, ok, message) for each translation rule of `drill`."""
    paths = catalogue.paths
    found = []
    for lang in drill.translations:
        if lang == ENGLISH:
            continue
        found += _file_findings(paths.lesson(drill.id), lang, paths.root, f"lesson ({lang})")
        hints = paths.hints(drill.id)
        found += _file_findings(hints, lang, paths.root, f"hints ({lang})")
        if judge(hints, lang).state is not Freshness.MISSING:
            problems = ladder_problems(paths.hints_dir, drill.id, lang)
            found.append(
                (
                    f"ladders ({lang})",
                    not problems,
                    "; ".join(problems)
                    or f"hints/{drill.id}.{lang}.yaml: the same ids, stages, patterns and ways",
                )
            )
        found.append(_title_finding(catalogue, drill, lang))
        if lang == glossary.LANG:
            found += glossary.drill_findings(
                translated_path(paths.lesson(drill.id), lang),
                translated_path(hints, lang),
                paths.root,
            )
        story = _story_finding(catalogue, drill, lang)
        if story is not None:
            found.append(story)
    return found


SHOWN_STORIES = 3  # a failure quotes this many missing stories, then counts the rest


def story_problem(catalogue: Catalogue, drill: Drill, lang: str) -> str:
    """Why the `lang` translation of `drill`'s test stories is not whole ("" when it is)."""
    paths = catalogue.paths
    test_file = paths.test_file(drill.file)
    collected = paths.stories(drill.id)
    shown = _shown(collected, paths.root)
    again = f"run `tutor dev stories {drill.id}`, then translate what it lists"
    if not collected.is_file():
        return f"{shown} is missing: {again}"
    try:
        sha, english = stories.read_collected(collected)
        table = stories.StoryTable(stories.drill_entries(paths.hints(drill.id), lang))
    except YamlFileError as exc:
        return str(exc)
    if sha != sha256_of(test_file):
        return (
            f"{shown} is stale: {_shown(test_file, paths.root)} changed since its stories "
            f"were collected ({again})"
        )
    lacking = [text for text in english if table.lacks(text)]
    if not lacking:
        return ""
    quoted = ", ".join(repr(text) for text in lacking[:SHOWN_STORIES])
    more = f" and {len(lacking) - SHOWN_STORIES} more" if len(lacking) > SHOWN_STORIES else ""
    return (
        f"hints/{drill.id}.{lang}.yaml has no translation under '{stories.KEY}:' for "
        f"{quoted}{more} ({shown} lists what {drill.id}'s tests can show)"
    )


def _story_finding(catalogue: Catalogue, drill: Drill, lang: str) -> tuple[str, bool, str] | None:
    if not catalogue.paths.test_file(drill.file).is_file():  # its own rule says it is missing
        return None
    problem = story_problem(catalogue, drill, lang)
    return (
        f"stories ({lang})",
        not problem,
        problem or f"hints/{drill.id}.{lang}.yaml translates every story its tests can show",
    )


def _file_findings(
    source: Path, lang: str, root: Path, subject: str, missing_note: str = ENGLISH_FIRST
) -> list:
    if not source.is_file():  # the English file's own rule says it is missing
        return []
    problem = file_problem(source, lang, root, missing_note)
    shown = _shown(judge(source, lang).path, root)
    return [(subject, not problem, problem or f"{shown} is up to date")]


def _title_finding(catalogue: Catalogue, drill: Drill, lang: str) -> tuple[str, bool, str]:
    name = titles_file(catalogue, lang).name
    try:
        titled = "title" in load_titles(catalogue, lang)["drills"].get(drill.id, {})
    except CatalogueError as exc:
        return (f"title ({lang})", False, str(exc))
    return (
        f"title ({lang})",
        titled,
        f"{name} gives {drill.id} a title" if titled else f"{name} has no title for {drill.id}",
    )


def course_findings(catalogue: Catalogue, drills: list[Drill]) -> list[tuple[str, bool, str]]:
    """The common hints and the track titles, once for each language the drills list."""
    paths = catalogue.paths
    found = []
    for lang in sorted({lang for d in drills for lang in d.translations} - {ENGLISH}):
        common = paths.hints_dir / f"{COMMON}.yaml"
        found += _file_findings(common, lang, paths.root, f"common hints ({lang})", "")
        if judge(common, lang).state is not Freshness.MISSING:
            problems = ladder_problems(paths.hints_dir, COMMON, lang)
            found.append(
                (
                    f"common ladders ({lang})",
                    not problems,
                    "; ".join(problems) or f"hints/{COMMON}.{lang}.yaml matches",
                )
            )
        if lang == glossary.LANG:
            found += glossary.course_findings(translated_path(common, lang), paths.root)
        name = titles_file(catalogue, lang).name
        try:
            tracks = load_titles(catalogue, lang)["tracks"]
        except CatalogueError as exc:
            found.append((f"track titles ({lang})", False, str(exc)))
            continue
        untitled = [t.id for t in catalogue.tracks if "title" not in tracks.get(t.id, {})]
        found.append(
            (
                f"track titles ({lang})",
                not untitled,
                f"{name} has no title for track {', '.join(untitled)}"
                if untitled
                else f"{name} titles every track",
            )
        )
    return found
