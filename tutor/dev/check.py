"""`tutor dev check`: the course proves itself, drill by drill, as rustlings' `dev check` does.

For each drill (all playable ones by default):

- content: every mistake the drill declares has a hint ladder of three stages (nudge, pointer,
  fix) and at least two known-buggy kernels in drills/mutants/<id>/; every ladder in the drill's
  hints file and every mutant is named after a declared or a generic diagnosis; the files the
  catalogue derives (starter, solution, tests, lesson, hints, bench recipe) exist;
- translations (tutor.dev.translations): each language the drill lists has its lesson and
  hints, fresh (made from the English as it is now), with ladders the English's shape;
- one-idea mutants kept as patches still apply to the solution, or to the correct variant their
  `base:` line names (tutor.dev.patches); a whole-file buggy mutant within seven lines of code
  (patches.NEAR_COPY_LINES) of the solution or a correct variant is refused: it is one idea, and
  belongs in a patch;
- behaviour, by running the drill's tests on each file: the untouched starter fails as
  `not-started` in every test, the solution passes with no diagnosis, every
  `<diagnosis>__<variant>.py` gets `<diagnosis>` first, every `correct__<variant>.py` passes;
  when a run tells the way the mistake was written (a failure's facts["way"]), the ladder has
  stages for that way;
- the perf coach: every `perf-<perf diagnosis>__<variant>.py` (a correct but slow kernel)
  passes the tests like a correct variant, names a perf diagnosis the coach knows (one every
  drill shares, tutor.bench.rules.PERF_IDS, or one the drill declares under `perf:`) with a
  ladder; every drill with bench shapes has one, every shared perf diagnosis has two across the
  course. On a GPU (`check_perf`, `tutor dev check --gpu`) each is benched at its case (a
  `bench-case: N[,M]` line, else the drill's first) and must get its perf diagnosis first, and
  the solution must get none there.

The same targets and the same judgement serve tests/test_drills.py and `tutor dev report`,
so "the course is proven" means one thing everywhere.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from tutor.course import diagnoses as dx
from tutor.course.catalogue import KERNEL_LANGUAGES, Catalogue, Drill
from tutor.course.hints import HintBook, HintFileError, drill_ladders
from tutor.dev import patches, translations
from tutor.run.results import RunResult
from tutor.run.runner import Runner
from tutor.states import RunStatus

CORRECT = "correct"  # mutants named correct__<variant>.py must pass clean
PERF = "perf-"  # perf-<perf diagnosis>__<variant>.py: correct, and slow for that reason
NO_PERF_DIAGNOSIS = "none"  # what the solution must get from the perf coach
STARTER = "starter"
SOLUTION = "solution"
MIN_MUTANTS = 2
STAGES = 3


@dataclass(frozen=True)
class Target:
    """One file to run through a drill's tests, and what must come of it."""

    drill: str
    name: str  # "starter", "solution" or the mutant's file name
    path: Path  # the file the tests load (for a .patch mutant, the file built from it)
    expect: str  # "pass", "not-started", or the diagnosis that must come first
    stale: str = ""  # for a .patch mutant that no longer applies to its base: why

    @property
    def label(self) -> str:
        return f"{self.drill}/{self.name}"


@dataclass(frozen=True)
class Finding:
    """The verdict on one target or one content rule."""

    drill: str
    subject: str  # a file name, or the rule that was checked
    ok: bool
    message: str

    def line(self) -> str:
        return f"{'✓' if self.ok else '✗'} {self.drill}/{self.subject}: {self.message}"


def expectation_of(mutant: Path) -> str:
    """`padding-where__no-where.py` -> "padding-where"; `correct__x.py` and the slow but correct
    `perf-spills__x.py` -> "pass"."""
    diagnosis = mutant.stem.partition("__")[0]
    return "pass" if diagnosis == CORRECT or diagnosis.startswith(PERF) else diagnosis


def perf_expectation(mutant: Path) -> str | None:
    """`perf-spills__huge-block.py` -> "spills"; None for a file that is not a perf mutant."""
    diagnosis = mutant.stem.partition("__")[0]
    return diagnosis.removeprefix(PERF) if diagnosis.startswith(PERF) else None


def mutants_of(catalogue: Catalogue, drill_id: str) -> list[Path]:
    """Whole-file mutants (`*.py`, or the suffix of the drill's kernel language: `*.cu`) and
    one-idea mutants kept as patches (`*.patch`)."""
    folder = catalogue.paths.mutants(drill_id)
    if not folder.is_dir():
        return []
    suffix = Path(catalogue.drill(drill_id).file).suffix
    return sorted([*folder.glob(f"*__*{suffix}"), *folder.glob("*__*.patch")])


def targets(catalogue: Catalogue, drill: Drill, *, starter: bool = True) -> list[Target]:
    """The solution, the starter and every mutant of `drill`, each with its expectation.

    Patch mutants are built from the current solution into .tutor/mutants/<drill>/.
    """
    paths = catalogue.paths
    found = [Target(drill.id, SOLUTION, paths.solution(drill.file), "pass")]
    if starter:
        found.append(Target(drill.id, STARTER, paths.starter(drill.file), dx.NOT_WRITTEN))
    for path in mutants_of(catalogue, drill.id):
        if path.suffix == ".patch":
            built, stale = _build_patch_mutant(catalogue, drill, path)
            found.append(Target(drill.id, path.name, built, expectation_of(path), stale))
        else:
            found.append(Target(drill.id, path.name, path, expectation_of(path)))
    return found


def _build_patch_mutant(catalogue: Catalogue, drill: Drill, patch: Path) -> tuple[Path, str]:
    """Write the patch's base with `patch` applied; returns (that file, why it failed or "").

    The base is the solution, or the correct variant that a `base:` line of the patch names.
    """
    built = catalogue.paths.built_mutants / drill.id / f"{patch.stem}{Path(drill.file).suffix}"
    try:
        text = patch.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return built, f"{patch.name} cannot be read: {exc}"
    base_name = patches.base(text)
    if base_name is None:
        base, what = catalogue.paths.solution(drill.file), "the solution"
    else:
        base, what = patch.parent / base_name, base_name
        if not _is_correct_variant(base, patch.parent):
            return built, (
                f"{patch.name} names base {base_name}, which is not a {CORRECT}__<variant>.py "
                f"file in {patch.parent}"
            )
    try:
        mutant = patches.apply(base.read_text(encoding="utf-8"), text, what)
    except (OSError, UnicodeDecodeError, patches.PatchError) as exc:
        return built, f"{patch.name} no longer applies to {what}: {exc}"
    catalogue.paths.writable(built).parent.mkdir(parents=True, exist_ok=True)
    _write_whole(built, mutant)
    return built, ""


def _write_whole(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader sees the old file or the new one, never half.

    Test workers build the same mutants at once (pytest-xdist imports the targets in each), and
    one may run a file while another writes it: the text goes to a file of its own first.
    """
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _is_correct_variant(path: Path, folder: Path) -> bool:
    """A whole-file correct variant directly in `folder`: the only files a patch may build on
    (they are proven to pass, so the patch's edit is the mutant's one mistake)."""
    return (
        path.parent == folder
        and path.name.startswith(f"{CORRECT}__")
        and path.suffix in KERNEL_LANGUAGES.values()
        and path.is_file()
        and not path.is_symlink()
    )


def judge(target: Target, result: RunResult | None) -> Finding:
    """Whether `result`, the run of `target`'s file, is what the target must give."""
    if target.stale or result is None:
        return Finding(target.drill, target.name, False, target.stale or "not run")
    first = result.diagnoses[0] if result.diagnoses else None
    got = "pass" if result.passed else (first or result.status)
    if target.expect == "pass":
        ok = result.passed and not result.diagnoses
    elif target.expect == dx.NOT_WRITTEN:
        ok = (
            result.status == RunStatus.FAILED
            and result.diagnoses == [dx.NOT_WRITTEN]
            and all(t.failed for t in result.tests)
        )
    else:
        ended = (RunStatus.FAILED, RunStatus.CRASHED, RunStatus.TIMEOUT, RunStatus.OUT_OF_MEMORY)
        ok = result.status in ended and first == target.expect
    if ok:
        return Finding(target.drill, target.name, True, f"{got}, as it must")
    failed = [t for t in result.tests if t.failed]
    why = failed[0].message if failed else result.message
    detail = f" ({failed[0].name}: {why})" if failed else (f" ({why})" if why else "")
    return Finding(
        target.drill, target.name, False, f"must give {target.expect}, gave {got}{detail}"[:600]
    )


def content_findings(catalogue: Catalogue, drill: Drill) -> list[Finding]:
    """The rules that need no run: files present, ladders, mutants, names."""
    paths = catalogue.paths
    found: list[Finding] = []

    def rule(subject: str, ok: bool, message: str) -> None:
        found.append(Finding(drill.id, subject, ok, message))

    required = {
        "starter file": paths.starter(drill.file),
        "solution file": paths.solution(drill.file),
        "test file": paths.test_file(drill.file),
        "lesson": paths.lesson(drill.id),
        "hints": paths.hints(drill.id),
    }
    if drill.bench:
        required["bench recipe"] = paths.bench_recipe(drill.id)
    for what, path in required.items():
        shown = path.relative_to(paths.root) if path.is_relative_to(paths.root) else path
        rule(what, path.is_file(), f"{shown} {'exists' if path.is_file() else 'is missing'}")
    for subject, ok, message in translations.drill_findings(catalogue, drill):
        rule(subject, ok, message)
    try:
        own = drill_ladders(paths.hints_dir, drill.id)
        book = HintBook(paths.hints_dir, drill.id)
    except HintFileError as exc:
        rule("hints", False, str(exc))
        return found
    mutants = mutants_of(catalogue, drill.id)
    for mistake in drill.mistakes:
        ladder = own.get(mistake.id)
        stages = len(ladder.stages) if ladder else 0
        rule(
            f"{mistake.id} ladder",
            stages == STAGES,
            f"hints/{drill.id}.yaml has {stages} stages for it (nudge, pointer, fix: {STAGES})",
        )
        kernels = [m for m in mutants if expectation_of(m) == mistake.id]
        rule(
            f"{mistake.id} mutants",
            len(kernels) >= MIN_MUTANTS,
            f"{len(kernels)} known-buggy kernels (at least {MIN_MUTANTS}, written differently)",
        )
    declared = set(drill.mistake_ids) | {lever.id for lever in drill.perf}
    for diagnosis in own:
        if diagnosis not in declared and diagnosis not in dx.GENERIC_RANKS:
            rule(
                f"{diagnosis} ladder",
                False,
                f"hints/{drill.id}.yaml has a ladder for '{diagnosis}', which the drill does "
                "not declare in drills.yaml and which is not a generic diagnosis",
            )
    found += _perf_content(drill, mutants, book)
    found += _near_copies(catalogue, drill, mutants)
    for mutant in mutants:
        expected = expectation_of(mutant)
        if expected != "pass" and expected not in declared and expected not in dx.GENERIC_RANKS:
            rule(
                mutant.name,
                False,
                f"'{expected}' is neither declared in drills.yaml for {drill.id} nor generic",
            )
        elif expected != "pass" and book.ladders.get(expected) is None:
            rule(mutant.name, False, f"no hint ladder for '{expected}'")
    return found


def _near_copies(catalogue: Catalogue, drill: Drill, mutants: list[Path]) -> list[Finding]:
    """A whole-file buggy mutant that differs from the solution or a correct variant by at most
    patches.NEAR_COPY_LINES lines of code: a copy that drifts from its original unseen, where
    a patch on that original would follow it."""
    solution = catalogue.paths.solution(drill.file)
    bases = [(solution, f"the solution {solution.name}")] + [
        (m, m.name) for m in mutants if _is_correct_variant(m, m.parent)
    ]
    texts = {path: _read(path) for path, _ in bases}
    found = []
    for mutant in mutants:
        if mutant.suffix == ".patch" or mutant.name.startswith(f"{CORRECT}__"):
            continue
        text = _read(mutant)
        for base, shown in bases:
            if text is None or texts[base] is None:
                continue
            apart = patches.code_lines_apart(texts[base], text, mutant.suffix)
            if apart is None or apart > patches.NEAR_COPY_LINES:
                continue
            where = "" if base == solution else f", its description saying `base: {base.name}`"
            lines = f"{apart} line{'' if apart == 1 else 's'} of code"
            found.append(
                Finding(
                    drill.id,
                    mutant.name,
                    False,
                    f"{mutant.name} differs from {shown} by {lines}: one idea, "
                    f"so keep it as {mutant.stem}.patch made on {base.name} "
                    f"(tutor.dev.patches.make){where}",
                )
            )
            break
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _perf_content(drill: Drill, mutants: list[Path], book: HintBook) -> list[Finding]:
    """A drill's perf mutants: each names a perf diagnosis the coach knows, with a ladder; a
    drill with bench shapes has one; each of the drill's own perf diagnoses has two."""
    from tutor.bench.rules import PERF_IDS

    found = []
    slow = [(m, perf_expectation(m)) for m in mutants if perf_expectation(m)]
    own = {m.id for m in drill.perf}
    for mutant, expected in slow:
        if expected not in PERF_IDS and expected not in own:
            found.append(
                Finding(
                    drill.id,
                    mutant.name,
                    False,
                    f"'{expected}' is neither a perf diagnosis every drill shares nor one "
                    f"{drill.id} declares under 'perf:' in drills.yaml",
                )
            )
        elif book.ladders.get(expected) is None:
            found.append(Finding(drill.id, mutant.name, False, f"no hint ladder for '{expected}'"))
    if drill.bench:
        found.append(
            Finding(
                drill.id,
                "perf mutants",
                bool(slow),
                f"{len(slow)} slow but correct kernels (perf-<diagnosis>__<variant>.py; at "
                "least one)",
            )
        )
    for lever in drill.perf:
        kernels = [m for m, expected in slow if expected == lever.id]
        found.append(
            Finding(
                drill.id,
                f"{lever.id} perf mutants",
                len(kernels) >= MIN_MUTANTS and book.ladders.get(lever.id) is not None,
                f"{len(kernels)} slow kernels (at least {MIN_MUTANTS}) and "
                + ("a ladder" if book.ladders.get(lever.id) else "no ladder"),
            )
        )
    return found


def perf_course_findings(catalogue: Catalogue) -> list[Finding]:
    """Across the whole course: two or more slow kernels for each shared perf diagnosis."""
    from tutor.bench.rules import PERF_IDS

    counts = dict.fromkeys(PERF_IDS, 0)
    for drill in catalogue.drills:
        for mutant in mutants_of(catalogue, drill.id):
            if perf_expectation(mutant) in counts:
                counts[perf_expectation(mutant)] += 1
    return [
        Finding(
            "course",
            f"{perf_id} perf mutants",
            count >= MIN_MUTANTS,
            f"{count} slow kernels across the course (at least {MIN_MUTANTS})",
        )
        for perf_id, count in counts.items()
    ]


def check_course(
    catalogue: Catalogue,
    drill_ids: Iterable[str] | None = None,
    *,
    runner: Runner | None = None,
    jobs: int | None = None,
    on_finding: Callable[[Finding], None] | None = None,
) -> list[Finding]:
    """Every content rule and every target's run for the drills asked for (all by default)."""
    chosen = (
        [catalogue.drill(d) for d in drill_ids]
        if drill_ids
        else [d for d in catalogue.drills if not d.coming]
    )
    runner = runner or Runner(catalogue)
    findings: list[Finding] = []

    def report(finding: Finding) -> None:
        findings.append(finding)
        if on_finding is not None:
            on_finding(finding)

    for drill in chosen:
        for finding in content_findings(catalogue, drill):
            report(finding)
    for subject, ok, message in translations.course_findings(catalogue, chosen):
        report(Finding("course", subject, ok, message))
    if not drill_ids:
        for finding in perf_course_findings(catalogue):
            report(finding)
    work = [t for drill in chosen for t in targets(catalogue, drill)]
    for target, result in prove(runner, work, jobs):
        report(judge(target, result))
        unladdered = way_without_stages(catalogue, target, result)
        if unladdered is not None:
            report(unladdered)
    return findings


def way_without_stages(
    catalogue: Catalogue, target: Target, result: RunResult | None
) -> Finding | None:
    """A finding when the run of a known-buggy kernel told the way its mistake was written
    (a failure's facts["way"]) and the mistake's ladder has no stages for that way: the hint
    would speak of another way of writing it. None when there is nothing to say."""
    if result is None or result.passed or target.expect in ("pass", dx.NOT_WRITTEN):
        return None
    failed = [t for t in result.tests if t.failed and t.diagnosis == target.expect]
    ways = sorted({str(t.facts["way"]) for t in failed if t.facts.get("way")})
    ladder = HintBook(catalogue.paths.hints_dir, target.drill).ladder(target.expect)
    missing = [way for way in ways if way not in ladder.ways]
    if not missing:
        return None
    return Finding(
        target.drill,
        target.name,
        False,
        f"its run says the mistake was written as {', '.join(missing)}, and the "
        f"'{target.expect}' ladder has no 'ways:' stages for that",
    )


def prove(
    runner: Runner, work: list[Target], jobs: int | None = None
) -> Iterator[tuple[Target, RunResult | None]]:
    """Each target of `work` with its run (None for a stale patch), in `work`'s order.

    On the CPU interpreter a drill's files run in one child, a session for each
    (Runner.run_batch): a process for each file costs more than most files' tests do. A file
    whose session did not end there runs alone, as a learner's file does. On a GPU each file
    gets a process of its own, as it does for a learner: a kernel that faults there leaves
    CUDA unusable for the rest of its process.
    """
    workers = jobs or max(1, min(4, os.cpu_count() or 1))
    runnable = [t for t in work if not t.stale]
    batched = runner.runs_on_cpu
    # The runs go on in worker threads, which a signal to the tutor never reaches: when the
    # caller stops (Ctrl-C, SIGTERM, or it stops asking), they are cancelled, not waited out.
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        if batched:
            files: dict[str, list[str]] = {}
            for target in runnable:
                files.setdefault(target.drill, []).append(str(target.path))
            runs = {d: pool.submit(runner.run_batch, d, paths, stop) for d, paths in files.items()}
        else:
            runs = {t: pool.submit(runner.run, t.drill, str(t.path), cancel=stop) for t in runnable}
        for target in work:
            if target.stale:
                yield target, None
                continue
            if not batched:
                yield target, runs[target].result()
                continue
            result = runs[target.drill].result().get(str(target.path))
            if result is None:  # its session did not end in the batch
                result = runner.run(target.drill, str(target.path), cancel=stop)
            yield target, result
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)


def as_json(findings: list[Finding]) -> dict:
    return {
        "ok": all(f.ok for f in findings),
        "failed": sum(not f.ok for f in findings),
        "findings": [asdict(f) for f in findings],
    }
