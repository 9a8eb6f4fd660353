"""The exceptions a drill test raises when it has diagnosed a failure.

A drill test's `DrillFailure` carries the test's own words, in English as the test writes them;
they are shown in the learner's language through the drill's `stories:` map (tutor.course.stories,
tutor.harness.story_text), like its suspects' stories. The harness's own failures
(`HarnessFailure`: a comparison's verdict, an error in the learner's file) are written through
the tutor's catalogue (`_()`) already, and are not looked up again.
"""

from __future__ import annotations

from tutor.harness import story_text


class DrillFailure(AssertionError):
    """A failed check with a diagnosis id, a one-line message and a few lines of detail.

    `line` is a line of the learner's file when the failure can be pinned to one. A failed
    value comparison also says where the output is wrong (`where`, `error_map`, `facts`).
    """

    def __init__(
        self,
        diagnosis: str,
        message: str,
        details: str = "",
        line: int | None = None,
        *,
        where: str = "",
        error_map: tuple[str, ...] = (),
        facts: dict | None = None,
    ):
        message, details = self._shown(message), self._shown(details)
        text = f"[{diagnosis}] {message}"
        super().__init__(text if not details else f"{text}\n{details}")
        self.diagnosis = diagnosis
        self.message = message
        self.details = details
        self.line = line
        self.where = where  # for a failed value comparison: one sentence on where it is wrong
        self.error_map = error_map  # ... and the picture (tutor.harness.errormap)
        # ... and its numbers, for the hint texts (errormap.ErrorMap.facts; "fill" says what a
        # never-written output holds: "zeros" or "empty")
        self.facts = dict(facts or {})
        self.error: BaseException | None = None  # the learner's exception it was made from
        # For a missing-mask claim from NaN: where the NaN were, for the plugin's re-run.
        self.guard_evidence = None

    @staticmethod
    def _shown(text: str) -> str:
        """The test's own words in the learner's language (the English when there is none)."""
        return story_text.text(text) if text else text

    def renamed(
        self,
        diagnosis: str,
        details: str,
        *,
        message: str = "",
        harness: bool = False,
        way: str = "",
        facts: dict | None = None,
    ) -> DrillFailure:
        """This failure under the diagnosis a test found evidence for, after it: the same
        message (or `message`), line and where-it-is-wrong, with the evidence as details
        (the test's words, translated like a DrillFailure's; `harness=True` when they are the
        harness's own, through `_()` already); `way`, how the mistake was written when its
        ladder tells that way apart, and `facts`, more numbers for the hint texts.

            except DrillFailure as failure:
                ...
                raise failure.renamed("one-pass-variance", "The same rows centred at 0 ...")
        """
        shown = HarnessFailure._shown if harness else DrillFailure._shown
        return HarnessFailure(
            diagnosis,
            shown(message) or self.message,
            shown(details),
            self.line,
            where=self.where,
            error_map=self.error_map,
            facts={**self.facts_renamed(), **(facts or {}), **({"way": way} if way else {})},
        )

    def facts_renamed(self) -> dict:
        """The facts to keep under another diagnosis: all but the way of writing the mistake,
        which was the old diagnosis's (its ladder's stages for that way)."""
        return {key: value for key, value in self.facts.items() if key != "way"}


class HarnessFailure(DrillFailure):
    """A DrillFailure whose words are the harness's own, already in the learner's language."""

    @staticmethod
    def _shown(text: str) -> str:
        return text
