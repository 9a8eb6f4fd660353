"""End to end in a real terminal: the app, the real runner on the CPU, a buggy kernel saved.

The app runs in a private tmux server (its own socket, so a learner's tmux is never touched) on a
throw-away copy of the course. A known-buggy T3 kernel is written into drills/mine/ while the app
watches; the mistake's name must appear on screen, and `q` must end the app cleanly.
Needs tmux (CI installs it); skipped with the reason when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import padding_where_mutant
from translated import translate_drill

from tutor.course import language
from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.lang import cells

TITLE = "Padded lanes enter the variance"  # hints/t3.yaml, diagnosis padding-where
RUN_LIMIT = 120  # seconds for a CPU run of the T3 tests on a busy machine

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
)


class Terminal:
    """One tmux session running one command, 160×45, on a private server."""

    def __init__(
        self, socket: Path, command: str, env: dict[str, str], size: tuple[int, int] = (160, 45)
    ) -> None:
        self.socket = socket
        self.env = env
        # The trailing `sleep` keeps the pane (and what the app printed) after it exits.
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "tutor",
            "-x",
            str(size[0]),
            "-y",
            str(size[1]),
            f"{command}; echo EXITED $?; sleep 600",
        )

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "tutor")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "tutor", *keys)

    def wait_for(self, text: str, timeout: float) -> float:
        """Seconds until `text` is on screen; fails with the screen when it never comes."""
        started = time.monotonic()
        while text not in (screen := self.screen()):
            if time.monotonic() - started > timeout:
                raise AssertionError(
                    f"{text!r} did not appear in {timeout:.0f} s; the screen:\n{screen}"
                )
            time.sleep(0.2)
        return time.monotonic() - started

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-S", str(self.socket), "kill-server"],
            env=self.env,
            capture_output=True,
            timeout=30,
            check=False,
        )


@pytest.fixture
def terminal_env(course: CoursePaths, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "TRITON"))}
    env.update(
        TUTOR_ROOT=str(course.root),
        TERM="xterm-256color",
        LANG="C.UTF-8",
        TMUX_TMPDIR=str(tmp_path),
    )
    for name in ("EDITOR", "VISUAL"):
        env.pop(name, None)
    return env


@pytest.fixture
def start_app(terminal_env, tmp_path):
    started: list[Terminal] = []

    def start(extra_env: dict[str, str] | None = None, size=(160, 45)) -> Terminal:
        env = dict(terminal_env, **(extra_env or {}))
        command = f"cd {env['TUTOR_ROOT']} && {sys.executable} -m tutor --cpu"
        terminal = Terminal(tmp_path / "tmux.sock", command, env, size)
        started.append(terminal)
        return terminal

    yield start
    for terminal in started:
        terminal.close()


def _progress_of(env: dict[str, str], drill_id: str) -> dict:
    """The drill's entry in `tutor progress --json`, the command line's view of the same file."""
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "progress", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)["drills"][drill_id]


def settle(course: CoursePaths) -> None:
    """Called at the first frame: wait until the app is as a learner finds it a moment later,
    its file watcher up (it starts just after that frame) and its warm process ready (its
    socket in .tutor/), so that a save runs forked from it, as most saves do."""
    since = time.monotonic()
    deadline = since + RUN_LIMIT
    while not list(course.state_dir.glob("warm-*-cpu.sock")):
        assert time.monotonic() < deadline, "the app's warm process never became ready"
        time.sleep(0.1)
    time.sleep(max(0.0, since + 1.0 - time.monotonic()))


def test_a_saved_buggy_kernel_gets_its_diagnosis_on_screen(start_app, terminal_env, course):
    terminal = start_app()
    up = terminal.wait_for("watch on", timeout=30)
    terminal.wait_for("CPU interpreter", timeout=5)
    settle(course)
    shutil.copyfile(padding_where_mutant(course), course.mine("t3_layernorm.py"))
    terminal.wait_for(TITLE, timeout=RUN_LIMIT)
    terminal.wait_for("t3: Failed:", timeout=30)
    terminal.keys("q")
    terminal.wait_for("EXITED 0", timeout=30)
    state = _progress_of(terminal_env, "t3")
    assert (state["status"], state["active_diagnosis"]) == ("failing", "padding-where")
    assert state["hints"] == {"padding-where": 1}  # stage 1 came by itself
    print(f"first frame after {up:.1f} s")


def test_e_hands_the_terminal_to_the_editor_and_comes_back(
    start_app, terminal_env, course, tmp_path
):
    editor = tmp_path / "editor.sh"
    # A stand-in for an editor: it writes the buggy kernel into the file it was given.
    mutant = padding_where_mutant(course)
    editor.write_text(f"#!/bin/sh\necho EDITOR RAN\ncp '{mutant}' \"$1\"\nsleep 0.5\n")
    editor.chmod(0o755)
    terminal = start_app({"EDITOR": str(editor)})
    terminal.wait_for("watch on", timeout=30)
    settle(course)
    for drill in load_catalogue(course).drills[1:]:  # down the list, drill by drill, to t3
        terminal.keys("Down")
        terminal.wait_for(f"drills/mine/{drill.file}", timeout=30)  # the hint panel's words
        if drill.id == "t3":
            break
    terminal.keys("e")
    terminal.wait_for(TITLE, timeout=RUN_LIMIT)  # back in the app, the watched save ran
    assert course.mine("t3_layernorm.py").read_text() == mutant.read_text()
    terminal.keys("q")
    terminal.wait_for("EXITED 0", timeout=30)


HANGS = """
import time
from pathlib import Path

def layer_norm(x, weight, bias, eps=1e-5):
    Path("{flag}").write_text("running")
    while True:
        time.sleep(0.05)

def rms_norm(x, weight, eps=1e-6):
    raise NotImplementedError("TODO")
"""


@pytest.mark.parametrize("signum", ["TERM", "HUP"])
def test_the_app_killed_mid_run_restores_the_terminal_and_leaves_no_process(
    start_app, course, tmp_path, signum
):
    import psutil

    flag = tmp_path / "running"
    terminal = start_app()
    terminal.wait_for("watch on", timeout=30)
    settle(course)
    course.mine("t3_layernorm.py").write_text(HANGS.format(flag=flag))  # watch starts the run
    deadline = time.monotonic() + RUN_LIMIT
    while not flag.exists():
        assert time.monotonic() < deadline, terminal.screen()
        time.sleep(0.2)

    def of_the_course() -> list:
        """The app, its warm process and its runs: they name the course or work inside it."""
        found = []
        for process in psutil.process_iter(["cmdline", "cwd"]):
            argv = process.info["cmdline"] or [""]
            cmdline = " ".join(argv)
            inside = (process.info["cwd"] or "") == str(course.root)
            if "python" in Path(argv[0]).name and (inside or str(course.root) in cmdline):
                found.append(process)
        return found

    apps = [p for p in of_the_course() if p.info["cmdline"][1:3] == ["-m", "tutor"]]
    assert apps, "the app's process should be up"
    for app in apps:
        app.send_signal(getattr(signal, f"SIG{signum}"))
    terminal.wait_for("EXITED", timeout=30)
    screen = terminal.screen()
    assert "watch on" not in screen  # the app's screen is gone: the shell's is back
    deadline = time.monotonic() + 20
    while of_the_course() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not of_the_course(), [p.info for p in of_the_course()]


def test_at_80x24_the_mistake_footer_and_newest_hint_fit(start_app, course):
    terminal = start_app(size=(80, 24))
    terminal.wait_for("watch on", timeout=30)
    settle(course)
    shutil.copyfile(padding_where_mutant(course), course.mine("t3_layernorm.py"))
    terminal.wait_for("t3: Failed:", timeout=RUN_LIMIT)
    screen = terminal.screen().splitlines()
    assert any(TITLE in line for line in screen), "\n".join(screen)  # the title on one line
    footer = screen[-1]
    assert "Help" in footer and "Quit" in footer, footer  # the footer is whole
    assert all(len(line) <= 80 for line in screen)
    terminal.keys("q")
    terminal.wait_for("EXITED 0", timeout=30)


@pytest.mark.parametrize("size", [(80, 24), (140, 42)], ids=["80x24", "140x42"])
def test_tab_and_f_fill_the_terminal_with_the_hint_then_the_run(start_app, course, size):
    """Keys typed at once, as a terminal delivers them: f must see the focus Tab moved."""
    terminal = start_app(size=size)
    terminal.wait_for("watch on", timeout=30)
    settle(course)
    shutil.copyfile(padding_where_mutant(course), course.mine("t3_layernorm.py"))
    terminal.wait_for("t3: Failed:", timeout=RUN_LIMIT)
    terminal.keys(
        "Tab", "Tab", "Tab", "Tab", "f"
    )  # the list, the tabs, the lesson, the run, the hint
    _wait_until(
        terminal, lambda screen: "1 Lesson" not in screen and TITLE in screen, "the hint, filled"
    )
    terminal.keys("f", "BTab", "f")  # back, Shift+Tab to the run, and the run fills the screen
    _wait_until(
        terminal, lambda screen: "1 Lesson" not in screen and "Where:" in screen, "the run, filled"
    )
    assert all(len(line) <= size[0] for line in terminal.screen().splitlines())
    terminal.keys("Escape")
    terminal.wait_for("1 Lesson", timeout=10)
    terminal.keys("q")
    terminal.wait_for("EXITED 0", timeout=30)


def _wait_until(terminal: Terminal, holds, what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not holds(screen := terminal.screen()):
        assert time.monotonic() < deadline, f"{what} never showed:\n{screen}"
        time.sleep(0.2)


def test_in_chinese_at_80x24_the_mistake_and_keys_read_and_l_switches(start_app, course):
    """TUTOR_LANG=zh: the hint's title and the footer in Chinese, nothing past 80 cells (a
    Chinese character takes two); L switches to English at once and remembers it."""
    translate_drill(course, "t3")  # small translations made from the English files
    terminal = start_app({"TUTOR_LANG": "zh"}, size=(80, 24))
    terminal.wait_for("监视：开", timeout=30)
    terminal.wait_for("CPU 解释器", timeout=5)
    settle(course)
    shutil.copyfile(padding_where_mutant(course), course.mine("t3_layernorm.py"))
    terminal.wait_for("t3: 失败：", timeout=RUN_LIMIT)
    screen = terminal.screen().splitlines()
    assert any("中文标题 padding-where" in line for line in screen), "\n".join(screen)
    footer = screen[-1]
    assert "? 帮助" in footer and "q 退出" in footer, footer
    assert all(cells.width(line) <= 80 for line in screen), "\n".join(screen)
    terminal.keys("L")
    terminal.wait_for("watch on", timeout=10)
    terminal.wait_for(TITLE, timeout=10)
    terminal.keys("q")
    terminal.wait_for("EXITED 0", timeout=30)
    assert language.remembered(course.state_dir) == "en"


def test_a_saved_syntax_error_is_on_screen_before_any_run(start_app, course):
    """The file is compiled in the tutor's own process: its line and Python's words show as
    soon as the save is seen, without the seconds a run's start-up takes."""
    terminal = start_app()
    terminal.wait_for("watch on", timeout=30)
    settle(course)
    mine = course.mine("t0_add.py")
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("def add(x, y)\n    return x + y\n", encoding="utf-8")
    seen = terminal.wait_for("syntax error", timeout=30)
    terminal.wait_for("t0_add.py:1", timeout=5)
    terminal.keys("q")
    terminal.wait_for("EXITED 0", timeout=30)
    print(f"the syntax error on screen {seen:.1f} s after the save")
