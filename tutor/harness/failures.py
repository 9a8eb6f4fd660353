"""The exception a drill test raises when it has diagnosed a failure."""

from __future__ import annotations


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

    def renamed(self, diagnosis: str, details: str, *, message: str = "") -> DrillFailure:
        """This failure under the diagnosis a test found evidence for, after it: the same
        message (or `message`), line and where-it-is-wrong, with the evidence as details.

            except DrillFailure as failure:
                ...
                raise failure.renamed("one-pass-variance", "The same rows centred at 0 ...")
        """
        return DrillFailure(
            diagnosis,
            message or self.message,
            details,
            self.line,
            where=self.where,
            error_map=self.error_map,
            facts=self.facts,
        )
