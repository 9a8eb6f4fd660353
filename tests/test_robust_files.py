"""The tutor's writes stay inside the course and are whole or absent: real links, disks, files.

A link anywhere on the way to a file the tutor writes is refused (nothing is written where it
points); a full disk, a read-only course folder or a progress file that cannot be read is one
line with exit code 2 and leaves the learner's files as they were; `tutor dev new` writes a
whole drill or nothing.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import tutor
from disks import fill

from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths


def _one_line_refusal(out: subprocess.CompletedProcess, words: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert words in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_state_folder_that_is_a_link_gets_no_progress_written(course, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    course.state_dir.symlink_to(outside, target_is_directory=True)
    _one_line_refusal(tutor(course, "hint", "t1"), "is a symbolic link")
    # A run still shows its verdict; only the record of it is refused.
    out = tutor(course, "check", "t1", "--cpu")
    _one_line_refusal(out, f"{course.state_dir}: is a symbolic link")
    assert "t1" in out.stdout
    assert list(outside.iterdir()) == []  # no progress, lock, kernel cache or warm socket


def test_a_progress_file_that_is_a_link_is_not_written_through(course, tmp_path):
    outside = tmp_path / "progress-elsewhere.json"
    outside.write_text('{"schema": 1, "drills": {}}')
    course.state_dir.mkdir()
    course.progress_file.symlink_to(outside)
    _one_line_refusal(tutor(course, "hint", "t1"), "is a symbolic link")
    assert outside.read_text() == '{"schema": 1, "drills": {}}'


def test_built_mutants_are_not_written_through_a_link(course, tmp_path):
    outside = tmp_path / "mutants-elsewhere"
    outside.mkdir()
    course.state_dir.mkdir()
    course.built_mutants.symlink_to(outside, target_is_directory=True)
    out = tutor(course, "dev", "check", "t1", "--cpu")
    _one_line_refusal(out, f"{course.built_mutants}: is a symbolic link")
    assert list(outside.iterdir()) == []


def test_a_progress_file_that_cannot_be_read_is_one_line(course):
    course.state_dir.mkdir()
    os.mkfifo(course.progress_file)  # opening it for reading would wait for a writer for ever
    for args in (("progress",), ("hint", "t1"), ("list",)):
        out = tutor(course, *args, timeout=60)
        _one_line_refusal(out, "cannot be read (a FIFO, not a regular file)")
    assert course.progress_file.exists() and not list(course.state_dir.glob("*.corrupt-*"))


def _course_on(disk: Path, course: CoursePaths) -> CoursePaths:
    for name in ("drills.yaml", "hints", "drills"):
        source = course.root / name
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, disk / name)
    return CoursePaths(disk)


def test_a_full_disk_during_a_reset_keeps_the_learners_file(course, small_disk):
    course = _course_on(small_disk, course)
    drill = load_catalogue(course).drill("t3")
    mine = course.mine(drill.file)
    mine.parent.mkdir(parents=True)
    work = course.solution(drill.file).read_text() + "# the learner's own lines\n"
    mine.write_text(work)
    assert tutor(course, "hint", "t3").returncode == 0  # progress exists before the disk fills
    progress = course.progress_file.read_text()
    fill(small_disk)
    out = tutor(course, "reset", "t3")
    _one_line_refusal(out, "No space left on device")
    assert mine.read_text() == work
    assert sorted(p.name for p in mine.parent.iterdir()) == [drill.file]  # no half-made copy
    assert not course.backups.exists() or list(course.backups.iterdir()) == []
    # A progress save on the full disk is refused the same way, and the file keeps what it had.
    _one_line_refusal(tutor(course, "hint", "t3"), "progress not saved")
    assert course.progress_file.read_text() == progress
    assert [p.name for p in course.state_dir.glob(".progress-*")] == []


def test_a_read_only_course_folder_is_one_line_and_runs_still_run(course, small_disk):
    course = _course_on(small_disk, course)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    assert not os.access(small_disk, os.W_OK)
    _one_line_refusal(tutor(course, "check", "t1", "--cpu"), "Read-only file system")
    _one_line_refusal(tutor(course, "hint", "t1"), "Read-only file system")
    for args in (("list",), ("progress",)):
        assert tutor(course, *args).returncode == 0
    # The reference still runs: no kernel cache, warm socket or progress needs writing.
    out = tutor(course, "check", "t1", "--impl", "solutions", "--cpu")
    assert out.returncode == 0, out.stdout + out.stderr


def _new_drill(course: CoursePaths, *args: str, **kw) -> subprocess.CompletedProcess:
    return tutor(course, "dev", "new", "t9", "--track", "T", *args, **kw)


def _course_files(course: CoursePaths) -> dict[str, bytes]:
    return {
        str(p.relative_to(course.root)): p.read_bytes()
        for p in course.root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_dev_new_writes_a_whole_drill_or_nothing(course):
    before = _course_files(course)
    bench = course.bench_recipe("t9").parent
    shutil.rmtree(bench)
    bench.write_text("a file where the bench recipes' folder should be\n")
    out = _new_drill(course, "--title", "Clamp", "--functions", "clamp")
    _one_line_refusal(out, "nothing was written, drills.yaml is as it was")
    after = _course_files(course)
    after.pop(str(bench.relative_to(course.root)))
    assert after == {k: v for k, v in before.items() if not k.startswith("drills/bench/")}
    assert not course.mutants("t9").exists()
    bench.unlink()
    bench.mkdir()
    assert _new_drill(course, "--title", "Clamp", "--functions", "clamp").returncode == 0


def test_dev_new_refuses_names_that_would_not_parse_and_quotes_any_title(course):
    for functions, words in (
        ("class", "'class' is a Python keyword"),
        ("a,a", "names a more than once"),
        ("torch", "'torch' is a name the drill's files use"),
    ):
        _one_line_refusal(_new_drill(course, "--title", "X", "--functions", functions), words)
    _one_line_refusal(_new_drill(course, "--title", "two\nlines", "--functions", "f"), "one line")
    title = 'Clamp \\ "both" ends: \\n is not a newline'
    out = _new_drill(course, "--title", title, "--functions", "clamp,clamp_min")
    assert out.returncode == 0, out.stderr
    drill = load_catalogue(course).drill("t9")
    assert drill.title == title
    for path in (course.starter(drill.file), course.solution(drill.file)):
        module = ast.parse(path.read_text())
        assert title in ast.get_docstring(module)
        assert [f.name for f in module.body if isinstance(f, ast.FunctionDef)][-2:] == [
            "clamp",
            "clamp_min",
        ]
    assert title in ast.get_docstring(ast.parse(course.test_file(drill.file).read_text()))


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "0", "-1", "12"])
def test_a_memory_limit_that_is_not_usable_is_one_line_before_anything_runs(course, value):
    env = dict(os.environ, TUTOR_MEMORY_LIMIT_MB=value)
    for args in (("check", "t1", "--cpu"), ()):  # () opens the app: refused before it starts
        out = tutor(course, *args, env=env, stdin=subprocess.DEVNULL)
        _one_line_refusal(out, f"TUTOR_MEMORY_LIMIT_MB={value!r}")
    assert not course.progress_file.exists()  # nothing ran, nothing was recorded against them
    assert not course.mine("t1_gelu.py").exists()


# ---- course files saved in another encoding, and state files that are not files ----


def _saved_as(path: Path, encoding: str, added: str = "") -> int:
    """Rewrite `path` in `encoding` (as a translator's editor may), with `added` at its end;
    returns the first line whose bytes are not UTF-8 there."""
    text = path.read_text(encoding="utf-8") + added
    path.write_bytes(text.encode(encoding))
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        try:
            line.encode(encoding).decode("utf-8")
        except UnicodeDecodeError:
            return number
    raise AssertionError(f"{path} reads the same in UTF-8")


def _failing_run_of_t3(course: CoursePaths) -> None:
    """A failing run of t3 recorded (padding-where), as a check would leave it."""
    from tutor.coach.run_hints import Coach
    from tutor.course.progress import ProgressStore
    from tutor.run.results import RunResult
    from tutor.states import RunStatus

    store = ProgressStore(course.progress_file)
    run = RunResult("t3", "mine", RunStatus.FAILED, diagnoses=["padding-where"])
    Coach(load_catalogue(course), store).record_run(run)


@pytest.mark.parametrize(
    ("name", "encoding", "added", "args", "looks"),
    [
        ("hints/t3.yaml", "cp1252", "# the mean \u2014 of x\n", ("check", "t3"), "Windows-1252"),
        ("drills.yaml", "gbk", "# 中文说明\n", ("list",), "GBK"),
        ("drills.zh.yaml", "gbk", "", ("list", "--lang", "zh"), "GBK"),
        ("drills/content/t3.md", "gbk", "", ("lesson", "t3"), "GBK"),
    ],
    ids=["hints", "catalogue", "titles", "lesson"],
)
def test_a_course_file_that_is_not_utf8_is_one_line_naming_its_line(
    course, name, encoding, added, args, looks
):
    line = _saved_as(course.root / name, encoding, added)
    out = tutor(course, *args, "--cpu") if args[0] == "check" else tutor(course, *args)
    _one_line_refusal(out, f"{name}:{line}: ")
    assert len(out.stderr.strip().splitlines()) == 1
    said = "不是 UTF-8 编码（看起来是 {}）" if "zh" in args else "not UTF-8 (it reads as {})"
    assert said.format(looks) in out.stderr
    assert not course.progress_file.exists()  # nothing ran, nothing was recorded
    if name != "drills.yaml":  # the rest of the course is still there
        assert tutor(course, "progress").returncode == 0


def test_a_solution_that_is_not_utf8_is_one_line_naming_its_line(course):
    from tutor.coach.run_hints import Coach
    from tutor.course.progress import ProgressStore
    from tutor.run.results import RunResult
    from tutor.states import RunStatus

    passed = RunResult("t1", "mine", RunStatus.PASSED)
    Coach(load_catalogue(course), ProgressStore(course.progress_file)).record_run(passed)
    line = _saved_as(course.solution("t1_gelu.py"), "gbk", "# 参考解\n")
    out = tutor(course, "solution", "t1")
    _one_line_refusal(out, f"t1_gelu.py:{line}: not UTF-8 (it reads as GBK)")


def test_a_translation_that_is_not_utf8_gives_the_english_with_a_note(course):
    _failing_run_of_t3(course)
    english = tutor(course, "hint", "t3", "--lang", "en").stdout
    hints = course.root / "hints" / "t3.zh.yaml"
    line = _saved_as(hints, "gbk")
    out = tutor(course, "hint", "t3", "--lang", "zh")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert f"hints/t3.zh.yaml:{line}: 不是 UTF-8 编码（看起来是 GBK）" in out.stdout
    assert english.splitlines()[1] in out.stdout  # the English ladder's first stage
    lesson = course.lesson("t3").with_name("t3.zh.md")
    line = _saved_as(lesson, "gbk")
    out = tutor(course, "lesson", "t3", "--lang", "zh")
    assert out.returncode == 0, out.stderr
    note, rest = out.stdout.split("\n", 1)
    assert f"drills/content/t3.zh.md:{line}: 不是 UTF-8 编码（看起来是 GBK）" in note
    assert rest.lstrip().startswith("# T3")  # the English lesson


def test_a_broken_chinese_hints_file_is_named_with_its_yaml_error(course):
    _failing_run_of_t3(course)
    hints = course.root / "hints" / "t3.zh.yaml"
    lines = hints.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(5, "  broken: [unclosed\n")
    hints.write_text("".join(lines), encoding="utf-8")
    out = tutor(course, "hint", "t3", "--lang", "zh")
    assert out.returncode == 0, out.stderr
    note = next(line for line in out.stdout.splitlines() if "hints/t3.zh.yaml" in line)
    assert "不是合法的 YAML" in note and "sha256" not in note, note
    assert re.search(r"hints/t3\.zh\.yaml:\d+: ", note), note


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "huge"])
def test_a_language_file_that_is_not_a_small_regular_file_is_no_choice(course, kind):
    """A FIFO there hung `tutor list` (and left the app a blank screen), /dev/zero read for
    ever: now each is no choice at all, and the locale decides."""
    course.state_dir.mkdir()
    remembered = course.state_dir / "language"
    if kind == "fifo":
        os.mkfifo(remembered)
    elif kind == "dev-zero":
        remembered.symlink_to("/dev/zero")
    elif kind == "folder":
        remembered.mkdir()
    else:
        with open(remembered, "wb") as sparse:  # 9 MiB of nothing, past the bound
            sparse.truncate(9 * 2**20)
    env = dict(os.environ, LANG="zh_CN.UTF-8", LC_ALL="", LC_MESSAGES="")
    env.pop("TUTOR_LANG", None)
    out = tutor(course, "list", env=env, timeout=60)
    assert out.returncode == 0 and "Triton 基础" in out.stdout, out.stderr


def test_a_lock_file_that_is_a_fifo_is_one_line_not_a_hang(course):
    course.state_dir.mkdir()
    os.mkfifo(course.state_dir / "progress.lock")  # an open for writing would wait for a reader
    out = tutor(course, "hint", "t1", timeout=60)
    _one_line_refusal(out, "progress.lock: a FIFO, not a regular file")


def test_the_language_is_written_whole_on_a_full_disk(course, small_disk):
    from tutor.course import language

    state = small_disk / ".tutor"
    language.remember(state, "zh")
    fill(small_disk)
    with pytest.raises(OSError):
        language.remember(state, "en")
    assert language.remembered(state) == "zh"  # what it held, not an empty file
    assert sorted(p.name for p in state.iterdir()) == ["language"]  # no temporary file left


RESETS_AT_ONCE = 4


def test_resets_at_once_each_keep_their_own_backup(course):
    mine = course.mine("t0_add.py")
    mine.parent.mkdir(parents=True)
    mine.write_text("# the learner's work\n")
    resets = [
        subprocess.Popen(
            [sys.executable, "-m", "tutor", "--root", str(course.root), "reset", "t0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(RESETS_AT_ONCE)
    ]
    said = [reset.communicate(timeout=120) for reset in resets]
    assert all(reset.returncode == 0 for reset in resets), said
    backups = [re.search(r"saved to (\S+)\.$", out).group(1) for out, _ in said]
    assert len(set(backups)) == RESETS_AT_ONCE, backups  # no two name the same backup
    assert sorted(str(p) for p in course.backups.iterdir()) == sorted(backups)
    assert "# the learner's work\n" in [Path(b).read_text() for b in backups]


# ---- a terminal that cannot print UTF-8 ----

C_LOCALE = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


@pytest.mark.parametrize(
    ("terminal", "args", "shown"),
    [
        (C_LOCALE, ("progress",), "t0    not started"),
        (C_LOCALE, ("--lang", "zh", "list"), "[ ] t0"),
        ({"PYTHONIOENCODING": "ascii"}, ("hint", "t3", "--lang", "zh"), "(padding-where)"),
    ],
    ids=["progress", "list-zh", "hint-zh"],
)
def test_a_terminal_that_cannot_print_utf8_gets_what_it_can(course, terminal, args, shown):
    _failing_run_of_t3(course)
    unset = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING", "PYTHONUTF8")
    env = {k: v for k, v in os.environ.items() if k not in unset} | terminal
    out = subprocess.run(
        [sys.executable, "-m", "tutor", "--root", str(course.root), *args],
        capture_output=True,
        env=env,
        timeout=120,
    )
    errors = out.stderr.decode("ascii", "replace")
    assert out.returncode == 0 and "Traceback" not in errors, errors
    text = out.stdout.decode("ascii")  # nothing the terminal cannot print
    assert shown in text, text
    if args[0] == "progress":  # "—" (no bench yet) as the terminal can print it
        assert next(line for line in text.splitlines() if shown in line).endswith(" -")
