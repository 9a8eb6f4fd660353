"""The exception a drill test raises when it has diagnosed a failure."""

from __future__ import annotations


class DrillFailure(AssertionError):
    """A failed check with a diagnosis id, a one-line message and a few lines of detail.

    `line` is a line of the learner's file when the failure can be pinned to one.
    """

    def __init__(self, diagnosis: str, message: str, details: str = "", line: int | None = None):
        text = f"[{diagnosis}] {message}"
        super().__init__(text if not details else f"{text}\n{details}")
        self.diagnosis = diagnosis
        self.message = message
        self.details = details
        self.line = line
        self.error: BaseException | None = None  # the learner's exception it was made from
