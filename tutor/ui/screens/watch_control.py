"""Watch for the drill screen: saving a learner file from any editor re-runs its drill.

watchfiles.awatch runs in its own async worker group, debounced; turning watch off cancels it.
Files the app writes itself (a starter copied on first selection, a reset) are recognised by
their content and do not start a run.
"""

from __future__ import annotations

from pathlib import Path

from textual import work
from watchfiles import Change, awatch

from tutor.ui import marks
from tutor.ui.messages import LearnerFileSaved
from tutor.ui.widgets.code_view import CodeView
from tutor.ui.widgets.drill_list import DrillList
from tutor.ui.widgets.status_bar import StatusBar


class WatchControl:
    """Mixed into DrillScreen, whose `watching` reactive and `start_run` it uses."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._written_by_app: dict[Path, str] = {}  # files the app wrote, not the learner

    def watch_watching(self, watching: bool) -> None:
        self.query_one(StatusBar).watching = watching
        if watching:
            self._watch_files()
        else:
            self.workers.cancel_group(self, "watch")

    @work(exclusive=True, exit_on_error=False, group="watch")
    async def _watch_files(self) -> None:
        catalogue = self.tutor.catalogue
        folder = catalogue.paths.mine("_").parent
        folder.mkdir(parents=True, exist_ok=True)
        by_name = {d.file: d.id for d in marks.playable(catalogue)}
        try:
            async for changes in awatch(
                folder,
                recursive=False,
                step=self.tutor.watch_step_ms,
                debounce=self.tutor.watch_debounce_ms,
            ):
                saved = {
                    by_name[Path(path).name]
                    for change, path in changes
                    if change != Change.deleted and Path(path).name in by_name
                }
                for drill_id in sorted(saved):
                    self.post_message(LearnerFileSaved(drill_id))
        except (OSError, RuntimeError) as exc:  # e.g. out of inotify watches
            self._say(f"Watch stopped ({exc}): press r to run the tests.", severity="error")
            self.watching = False

    def on_learner_file_saved(self, message: LearnerFileSaved) -> None:
        drill_id = message.drill_id
        path = self.tutor.catalogue.paths.mine(self.tutor.catalogue.drill(drill_id).file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return
        if drill_id == self.selected:
            self.query_one(CodeView).reload()
        if self._written_by_app.pop(path, None) == text or not self.watching:
            return  # the app's own copy of a starter, or watch went off meanwhile
        if drill_id != self.selected:
            self.query_one(DrillList).select_drill(drill_id)
        self.start_run(drill_id)

    def _note_app_write(self, path: Path) -> None:
        try:
            self._written_by_app[path] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass
