"""The learner's progress: one JSON file per course folder, schema-versioned, written atomically.

Layout of `.tutor/progress.json`:

    {"schema": 1,
     "drills": {"t3": {"status": "failing", "runs": 4, "passed_runs": 0,   # the last run's verdict
                       "hints": {"padding-where": 2},        # stages revealed per diagnosis
                       "active_diagnosis": "padding-where",  # the one the next hint is about
                       "last_run": {"status": ..., "diagnoses": [...], "backend": ..., "at": ...},
                       "solved_at": null, "solved_with_hints": null,  # the first pass, kept
                       "best_bench": {"label": {"us": 12.3, "gbps": 2900, ...}}}}}

`status` says how the file stands now (a drill that passed and fails again is "failing"; a reset
makes it "not-started"); `solved_at` says it was passed once, and stays. A file that cannot be
read is moved aside (never deleted) and the learner is told where it went.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = 1

NOT_STARTED = "not-started"
FAILING = "failing"
PASSED = "passed"


@dataclass
class DrillProgress:
    status: str = NOT_STARTED
    runs: int = 0
    passed_runs: int = 0
    hints: dict[str, int] = field(default_factory=dict)
    active_diagnosis: str | None = None
    last_run: dict[str, Any] | None = None
    solved_at: str | None = None
    solved_with_hints: bool | None = None
    best_bench: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def hints_revealed(self) -> int:
        return sum(self.hints.values())

    @property
    def solved(self) -> bool:
        """Passed at least once (the file may fail now, or be back to its starter)."""
        return self.status == PASSED or self.solved_at is not None

    @property
    def regressed(self) -> bool:
        """Passed before, and the last run fails."""
        return self.solved and self.status == FAILING


class ProgressStore:
    """Load, change and save the progress file. `warning` says if a corrupt file was set aside."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.drills: dict[str, DrillProgress] = {}
        self.warning: str | None = None
        self.reload()

    def reload(self) -> None:
        """Read the file again (another process, e.g. the CLI beside the app, may have written)."""
        self.drills = {}
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError(
                    f"unknown schema {data.get('schema') if isinstance(data, dict) else data!r}"
                )
            known = set(DrillProgress.__dataclass_fields__)
            for drill_id, raw in data.get("drills", {}).items():
                self.drills[drill_id] = DrillProgress(
                    **{k: v for k, v in raw.items() if k in known}
                )
        except (ValueError, TypeError, AttributeError, OSError) as exc:
            aside = self.path.with_name(
                f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}"
            )
            os.replace(self.path, aside)
            self.drills = {}
            self.warning = (
                f"{self.path} could not be read ({exc}); it was moved to {aside} and "
                "progress starts afresh"
            )

    def drill(self, drill_id: str) -> DrillProgress:
        return self.drills.setdefault(drill_id, DrillProgress())

    def save(self) -> None:
        """Write to a temporary file in the same folder, then rename it over the old one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"schema": SCHEMA, "drills": {k: asdict(v) for k, v in sorted(self.drills.items())}}
        fd, tmp = tempfile.mkstemp(prefix=".progress-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=2)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")
