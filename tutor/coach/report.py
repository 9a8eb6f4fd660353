"""Plain-text renderings of runs, hints and progress for the command line."""

from __future__ import annotations

import itertools
import re
import shutil

from tutor.coach.run_hints import HintView
from tutor.course import diagnoses as dx
from tutor.course import progress as p
from tutor.course.catalogue import Catalogue
from tutor.course.hints import HintBook, stage_blocks
from tutor.lang import cells, mapwords
from tutor.lang.i18n import N_, _, ngettext
from tutor.run.results import ONE_STEP, RunResult, TestResult
from tutor.states import BackendName, DrillStatus, Outcome, RunStatus, label

MAX_FAILED_SHOWN = 6
MAP_INDENT = " " * 8
STATUS_MARK = {DrillStatus.NOT_STARTED: " ", DrillStatus.FAILING: "✗", DrillStatus.PASSED: "✓"}
REGRESSED_MARK = "!"


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 100))


def _wrapped(text: str, indent: str) -> list[str]:
    """Wrap prose to the terminal; keep code excerpts (lines like `  12 | x = ...`) as they are."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if " | " in line[:12]:
            out.append(indent + line.strip())
        else:
            out.extend(
                cells.wrap(line, _width(), indent)  # by cells: a CJK character takes two
            )
    return out


_LIST_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+\.)\s+|\s*>\s?)")


def format_lesson(markdown: str, width: int | None = None) -> str:
    """A lesson for the terminal (`tutor lesson`): its paragraphs, list items and quotes
    wrapped to the terminal by cells, by the line-breaking rules (tutor.lang.cells.wrap), the
    lines of a paragraph joined as their language joins them (a break inside Chinese is no
    space); headings, tables and code kept line for line. The terminal would otherwise break a
    long line anywhere: inside a date, or before a Chinese comma."""
    width = width or _width()
    out: list[str] = []
    paragraph: list[str] = []
    lead = ""  # the list marker or quote mark of the paragraph being gathered

    def flush() -> None:
        nonlocal lead
        if paragraph:
            hang = " " * cells.width(lead) if not lead.strip().startswith(">") else lead
            wrapped = cells.wrap(cells.join_lines(paragraph), width, hang) or [hang]
            out.extend([lead + wrapped[0][len(hang) :], *wrapped[1:]])
        paragraph.clear()
        lead = ""

    fenced = False
    for line in markdown.splitlines():
        verbatim = fenced or line.startswith(("```", "    ", "\t", "|", "#", "<"))
        if line.startswith("```"):
            fenced = not fenced
        if verbatim or not line.strip():
            flush()
            out.append(line)
            continue
        marker = _LIST_ITEM.match(line)
        if marker and not line[marker.end() :].strip():  # a quote's blank line
            flush()
            out.append(line.rstrip())
            continue
        if marker and (not paragraph or not lead.strip().startswith(">")):
            flush()
            lead = marker.group(1)
            line = line[marker.end() :]
        elif marker:  # the next line of a quote
            line = line[marker.end() :]
        paragraph.append(line)
    flush()
    return "\n".join(out)


# An error map (tutor.harness.errormap) is a heading, rows of one-character cells, and a legend.
# Where a cell covers several, the worse one shows: NaN, then never written, then wrong.
MAP_CELLS = "N_X."  # worst first


def fit_error_map(lines: list[str], width: int, facts: dict | None = None) -> list[str]:
    """The error map's picture narrowed to `width` cells, so no row wraps: neighbouring cells
    are merged (the worse one shows), and the heading, made again from the failure's `facts`
    (tutor.harness.errormap), says how many columns a cell covers now. A picture that fits is
    returned as it is."""
    rows = [n for n, line in enumerate(lines) if line and set(line) <= set(MAP_CELLS)]
    cells = max((len(lines[n]) for n in rows), default=0)
    width = max(width, 1)
    if cells <= width:
        return list(lines)
    edges = [j * cells // width for j in range(width + 1)]
    fitted = list(lines)
    for n in rows:
        row = lines[n]
        fitted[n] = "".join(
            min(row[a:b] or ".", key=MAP_CELLS.index) for a, b in itertools.pairwise(edges)
        )
    facts = facts or {}
    if 0 not in rows and {"rows", "columns", "flat"} <= set(facts):
        total_rows, columns = int(facts["rows"]), int(facts["columns"])
        per_row = mapwords.per_cell(total_rows, min(total_rows, len(rows)))
        fitted[0] = mapwords.heading(
            bool(facts["flat"]), total_rows, columns, per_row, mapwords.per_cell(columns, width)
        )
    return fitted


def stage_plain(stage: str, indent: str) -> list[str]:
    """A hint stage as plain lines: prose wrapped to the terminal, code kept as written."""
    lines: list[str] = []
    for kind, block in stage_blocks(stage):
        if lines:
            lines.append("")
        if kind == "code":
            lines.extend(f"{indent}    {row}".rstrip() for row in block.splitlines())
        else:
            lines.extend(cells.wrap(block, _width(), indent))
    return lines


# Values the CPU interpreter made: it keeps bf16 as raw 16-bit integers (interpreter-limits.md),
# so a kernel's bf16 arithmetic without an upcast comes out as garbage, NaN or 1e26, there only.
INTERPRETER_MADE_THESE = N_(
    "These values are the CPU interpreter's: it cannot do bf16 arithmetic, so without an "
    "upcast it gives garbage where a GPU would round."
)


def interpreter_note(test: TestResult, backend: str) -> str:
    """The sentence to put beside a failed comparison's values when the CPU interpreter's bf16
    made them (the test's diagnosis says so, on the CPU); "" everywhere else."""
    if backend == BackendName.CPU and test.diagnosis == dx.BF16_NO_UPCAST and test.where:
        # One step off is a rounding left in the kernel, not the interpreter's garbage.
        return "" if test.facts.get(ONE_STEP) else _(INTERPRETER_MADE_THESE)
    return ""


def solution_rule(hint_how: str) -> str:
    """When the reference solution opens, the same words in the app and the CLI; `hint_how`
    says how to reveal a hint there (`h`, `tutor hint t3`)."""
    return _(
        "opens after your file passes, or once every hint for a mistake in your kernel is out "
        "({hint_how}); the hints for an untouched starter do not open it."
    ).format(hint_how=hint_how)


def _same_failures(failed: list[TestResult]) -> list[list[TestResult]]:
    """Failed tests grouped by what they say (a syntax error says the same in every test),
    in the order of each group's first test."""
    groups: dict[tuple, list[TestResult]] = {}
    for test in failed:
        groups.setdefault((test.diagnosis, test.message, test.details, test.where), []).append(test)
    return list(groups.values())


def format_run(
    result: RunResult, book: HintBook, root_text: str = "", never_ran: list[str] | None = None
) -> str:
    """What `tutor check` prints: failed tests with what differs, then the diagnosis.
    `never_ran` names the tests a run cut short never finished (CheckedRun.never_ran)."""
    where = result.impl.replace(root_text, "") if root_text else result.impl
    if result.backend:
        device = label(result.backend, result.device_name)
        lines = [
            _("{drill}: {file} on {device}").format(drill=result.drill, file=where, device=device)
        ]
    else:
        lines = [f"{result.drill}: {where}"]
    failed = [t for t in result.tests if t.failed]
    groups = _same_failures(failed)
    said: set[str] = set()  # a note on the backend is said once, beside the first values it fits
    for group in groups[:MAX_FAILED_SHOWN]:
        test = group[0]
        tag = f"  [{test.diagnosis}]" if test.diagnosis else ""
        lines.append(f"  ✗ {test.name}{tag}")
        note = interpreter_note(test, result.backend)
        if note in said:
            note = ""
        said.add(note)
        where_text = test.where and _("Where: {where}").format(where=test.where)
        for text in (test.message, note, where_text, test.details):
            lines.extend(_wrapped(text, "      "))
        if len(group) == len(failed) > 1:
            same = _("The same in all {count} failed tests.").format(count=len(failed))
            lines.append(f"      {same}")
        elif len(group) > 1:
            others = ", ".join(t.name for t in group[1:])
            more = ngettext(
                "The same in {count} more: {names}",
                "The same in {count} more: {names}",
                len(group) - 1,
            ).format(count=len(group) - 1, names=others)
            lines.extend(_wrapped(more, "      "))
        if test.error_map and group is groups[0]:  # one picture is enough to read
            picture = fit_error_map(test.error_map, _width() - len(MAP_INDENT), test.facts)
            lines.extend(f"{MAP_INDENT}{row}" for row in picture)
    # Once for the run, however many failed tests it explains.
    for backend_note in dict.fromkeys(t.backend_note for t in failed if t.backend_note):
        lines.extend(_wrapped(backend_note, "  "))
    unshown = sum(len(group) for group in groups[MAX_FAILED_SHOWN:])
    if unshown:
        more = ngettext(
            "… and {count} more failed test", "… and {count} more failed tests", unshown
        )
        lines.append("  " + more.format(count=unshown))
    passed = sum(t.outcome == Outcome.PASSED for t in result.tests)
    skipped = sum(t.outcome == Outcome.SKIPPED for t in result.tests)
    counts = _("{passed} passed, {failed} failed").format(passed=passed, failed=len(failed))
    if skipped:
        counts += _(", {count} skipped").format(count=skipped)
    if never_ran:
        counts += _(", {count} never ran").format(count=len(never_ran))
    if result.tests or never_ran:
        runner = (
            _("warm runner: torch and triton already loaded") if result.warm else _("cold start")
        )
        if not result.duration and all(t.diagnosis == dx.SYNTAX_ERROR for t in result.tests):
            runner = _("found before any run: the file does not compile")
        seconds = f"{result.duration:.1f}"
        lines.append(
            _("{counts} in {seconds} s ({runner})").format(
                counts=counts, seconds=seconds, runner=runner
            )
        )
    if never_ran:
        cut = _("Never ran (the run was cut short): {tests}").format(tests=", ".join(never_ran))
        lines.extend(_wrapped(cut, "  "))
    if result.message:
        lines.append(
            _("Run {status}: {message}").format(status=result.status, message=result.message)
        )
    if result.passed:
        lines.append(_("All tests pass."))
    elif result.diagnoses:
        top, *others = result.diagnoses
        lines.append(_("Diagnosis: {title} ({id})").format(title=book.title(top), id=top))
        if others:
            lines.append(_("Also seen: {ids}").format(ids=", ".join(others)))
    elif result.status not in (RunStatus.PASSED, RunStatus.FAILED):
        lines.append(_("Output of the test run:"))
        lines.extend(f"  {line}" for line in result.output.strip().splitlines()[-25:])
    return "\n".join(lines)


def _numbered(stages: tuple[str, ...]) -> list[str]:
    """Revealed stages as `  1. ...` blocks, prose wrapped and code kept."""
    lines = []
    for number, stage in enumerate(stages, start=1):
        body = stage_plain(stage, "     ")
        if body and stage_blocks(stage)[0][0] == "prose":
            lines.append(f"  {number}. " + body[0].strip())
            lines.extend(body[1:])
        else:  # code first: under the number, every line at one indent, as it pastes
            lines.append(f"  {number}.")
            lines.extend(body)
    return lines


def format_hint(view: HintView | None, drill_id: str, remembered: bool = True) -> str:
    """The revealed stages; `remembered` is False for files other than the learner's own."""
    if view is None:
        return _(
            "No hint for {drill}: no failing run with a diagnosis yet (run `tutor check {drill}`)."
        ).format(drill=drill_id)
    heading = _("Hint — {title} ({id})").format(title=view.title, id=view.diagnosis)
    lines = [heading, *_numbered(view.stages)]
    if view.note:
        lines.insert(1, f"  ({view.note})")
    if not remembered:
        lines.append(_("(Only the first hint is shown for files other than your own.)"))
    elif view.exhausted and not view.opens_solution:
        lines.append(
            _(
                "That was the last hint for an untouched starter: write your kernel, then "
                "`tutor check {drill}`."
            ).format(drill=drill_id)
        )
    elif view.exhausted:
        lines.append(
            _("That was the last hint: `tutor solution {drill}` shows the reference.").format(
                drill=drill_id
            )
        )
    else:
        lines.append(_("`tutor hint {drill}` reveals the next one.").format(drill=drill_id))
    return "\n".join(lines)


def format_perf_hint(view, drill_id: str) -> str:
    """The perf coach's revealed stages (tutor.coach.perf_hints.PerfView), or why there are none."""
    if view is None:
        return _(
            "No perf hint for {drill}: the last `tutor bench {drill}` of your file found "
            "nothing slower than the reference (or there was none yet)."
        ).format(drill=drill_id)
    lines = [
        _("Perf hint — {title} ({id}, at {case})").format(
            title=view.title, id=view.diagnosis, case=view.case
        ),
        *_numbered(view.stages),
    ]
    if view.exhausted:
        lines.append(
            _("That was the last stage: change the kernel, then `tutor bench {drill}`.").format(
                drill=drill_id
            )
        )
    else:
        lines.append(_("`tutor hint {drill} --perf` reveals the next one.").format(drill=drill_id))
    return "\n".join(lines)


def format_list(catalogue: Catalogue, store: p.ProgressStore) -> str:
    lines = []
    title_cells = max((cells.width(d.title) for d in catalogue.drills), default=0)
    for track in catalogue.tracks:
        lines.append(f"{track.id}  {track.title}")
        for drill in catalogue.in_track(track.id):
            state = store.drill(drill.id)
            mark = "…" if drill.coming else _mark(state)
            note = _("coming soon") if drill.coming else status_words(state)
            title = cells.ljust(drill.title, title_cells)  # the longest title sets the column
            lines.append(f"  [{mark}] {drill.id:<4} {title}  {note}")
    return "\n".join(lines)


def _mark(state: p.DrillProgress) -> str:
    if state.regressed:
        return REGRESSED_MARK
    return STATUS_MARK[DrillStatus.PASSED] if state.solved else STATUS_MARK.get(state.status, "?")


def status_words(state: p.DrillProgress) -> str:
    """The drill in a few words: whether it was solved, and how its last run went."""
    if state.regressed:
        return _("passed before, failing now")
    if state.status == DrillStatus.PASSED:
        return _("passed with hints") if state.solved_with_hints else _("passed without hints")
    if state.solved:
        return _("passed before, reset")
    if state.status == DrillStatus.FAILING:
        return _("failing")
    return _("not started")


def _solved_words(state: p.DrillProgress) -> str:
    if not state.solved:
        return _("no")
    return _("yes, with hints") if state.solved_with_hints else _("yes, no hints")


def _last_run_words(state: p.DrillProgress) -> str:
    if not state.last_run:
        return "—"
    return str(state.last_run.get("status", "—"))


def format_progress(catalogue: Catalogue, store: p.ProgressStore) -> str:
    playable = [d for d in catalogue.drills if not d.coming]
    done = sum(store.drill(d.id).solved for d in playable)
    lines = [_("{done} of {total} drills passed").format(done=done, total=len(playable)), ""]
    lines.append(
        "  "
        + "".join(
            cells.ljust(_(word), size)
            for word, size in (
                (N_("drill"), 6),
                (N_("status"), 28),
                (N_("solved"), 17),
                (N_("last run"), 10),
            )
        )
        + f"{cells.rjust(_('runs'), 5)}{cells.rjust(_('hints'), 7)}  {_('best bench')}"
    )
    for drill in playable:
        state = store.drill(drill.id)
        bench = (
            ", ".join(
                f"{label}: {row.get('us', 0):.1f} µs"
                for label, row in sorted(state.best_bench.items())[:2]
            )
            or "—"
        )
        lines.append(
            f"  {drill.id:<6}{cells.ljust(status_words(state), 28)}"
            f"{cells.ljust(_solved_words(state), 17)}"
            f"{_last_run_words(state):<10}{state.runs:>5}{state.hints_revealed:>7}  {bench}"
        )
    return "\n".join(lines)
