"""The bottom line: where kernels run, whether watch is on, and what the app is doing."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Label

from tutor.lang.i18n import _


class StatusBar(Horizontal):
    backend: reactive[str] = reactive(lambda: _("finding the backend…"))
    """"CPU interpreter" or the GPU's name."""
    host: reactive[str] = reactive("")
    """The host the kernels run on over ssh; "" for this machine."""
    watching: reactive[bool] = reactive(True)
    """Whether saving a learner file re-runs its drill."""
    activity: reactive[str] = reactive("")
    """The latest thing that happened, in a few words."""

    def compose(self) -> ComposeResult:
        yield Label(id="backend")
        yield Label(id="watch")
        yield Label(id="activity")

    def watch_backend(self, backend: str) -> None:
        where = _("{backend} on {host}").format(backend=backend, host=self.host)
        self.query_one("#backend", Label).update(Text(where if self.host else backend))

    def watch_host(self, host: str) -> None:
        self.watch_backend(self.backend)

    def watch_watching(self, watching: bool) -> None:
        self.set_class(watching, "-watching")
        self.query_one("#watch", Label).update(_("watch on") if watching else _("watch off"))

    def relabel(self, backend: str) -> None:
        """Say it all again in the active language (`backend` as it reads now)."""
        self.backend = backend
        self.watch_watching(self.watching)

    def watch_activity(self, activity: str) -> None:
        # One line of the bar's width (tutor.tcss): its words change on every test of a run,
        # its size never, so the screen need not be laid out again.
        label = self.query_one("#activity", Label)
        label.update(Text(activity, no_wrap=True, overflow="ellipsis"), layout=False)
