"""Progress is kept on disk atomically, and a corrupt file is set aside, never dropped silently."""

from __future__ import annotations

import errno
import json
import os

from tutor.course import progress as p
from tutor.states import DrillStatus


def test_a_file_written_before_the_status_enums_reads_and_writes_the_same_words(tmp_path):
    path = tmp_path / "progress.json"
    old = {
        "t1": {"status": "passed", "runs": 1, "passed_runs": 1},
        "t2": {"status": "failing", "runs": 3, "solved_at": "2026-11-30T10:00:00"},
        "t3": {"status": "not-started", "runs": 2, "solved_at": "2026-11-30T11:00:00"},
    }
    path.write_text(json.dumps({"schema": 1, "drills": old}))
    store = p.ProgressStore(path)
    assert store.warning is None
    assert store.drill("t1").status == DrillStatus.PASSED and store.drill("t1").solved
    assert store.drill("t2").regressed and store.drill("t3").solved
    assert store.drill("t4").status == DrillStatus.NOT_STARTED  # never seen: the default
    store.save()
    written = json.loads(path.read_text())["drills"]
    assert {d: written[d]["status"] for d in written} == {
        "t1": "passed",
        "t2": "failing",
        "t3": "not-started",
        "t4": "not-started",
    }


def test_round_trip(tmp_path):
    store = p.ProgressStore(tmp_path / "progress.json")
    state = store.drill("t3")
    state.runs, state.hints = 2, {"padding-where": 2}
    store.save()
    again = p.ProgressStore(tmp_path / "progress.json")
    assert again.drill("t3").runs == 2
    assert again.drill("t3").hints_revealed == 2
    assert json.loads((tmp_path / "progress.json").read_text())["schema"] == p.SCHEMA


def test_save_leaves_no_temporary_files_and_replaces_whole(tmp_path):
    store = p.ProgressStore(tmp_path / "progress.json")
    for n in range(3):
        store.drill("t1").runs = n
        store.save()
    assert [f.name for f in tmp_path.iterdir()] == ["progress.json"]


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    store = p.ProgressStore(tmp_path / "progress.json")
    store.drill("t1").runs = 1
    store.save()
    store.drill("t1").runs = 5

    def disk_full(fd):  # the bytes are written, and the disk cannot hold them
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    try:
        store.save()
    except OSError:
        pass
    assert json.loads((tmp_path / "progress.json").read_text())["drills"]["t1"]["runs"] == 1
    assert [f.name for f in tmp_path.iterdir()] == ["progress.json"]


def test_corrupt_file_is_moved_aside_with_a_warning(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text('{"schema": 1, "drills": {"t1": ')
    store = p.ProgressStore(path)
    assert store.drills == {}
    assert store.warning and "moved to" in store.warning
    aside = [f for f in tmp_path.iterdir() if f.name.startswith("progress.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text().startswith('{"schema": 1')
    assert not path.exists()


def test_unknown_schema_is_treated_as_corrupt(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text('{"schema": 99, "drills": {}}')
    assert "unknown schema 99" in p.ProgressStore(path).warning


def test_a_write_by_another_process_is_noticed_and_the_stores_own_is_not(tmp_path):
    path = tmp_path / ".tutor" / "progress.json"
    app, cli = p.ProgressStore(path), p.ProgressStore(path)
    assert not app.changed_on_disk()
    with app.update() as store:
        store.drill("t3").runs = 1
    assert not app.changed_on_disk()  # its own save
    with cli.update() as store:  # e.g. `tutor hint t3` beside the app
        store.drill("t3").hints["padding-where"] = 2
    assert app.changed_on_disk()
    app.reload()
    assert not app.changed_on_disk() and app.drill("t3").hints == {"padding-where": 2}
