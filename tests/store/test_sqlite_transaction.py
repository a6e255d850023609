"""A commit that fails leaves the SQLite store as it was and ready for the next writer."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kforge.errors import StoreError, WriteConflictError
from kforge.frames import AgentThinking, utc_now
from kforge.store import RunRecord, RunStatus, SQLiteStore, StepRecord


def _run() -> RunRecord:
    now = utc_now()
    return RunRecord(
        id="r1",
        agent_type="t",
        status=RunStatus.PENDING,
        created_at=now,
        updated_at=now,
        input={},
    )


def _frame(seq: int) -> AgentThinking:
    return AgentThinking(run_id="r1", seq=seq, message=f"m{seq}")


def test_a_refused_commit_writes_nothing_and_frees_the_store_for_another_thread(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "kf.db")
    store.create_run(_run())
    store.commit("r1", [_frame(1)])
    with pytest.raises(WriteConflictError):
        # the step row is written before the frames' run update finds the gap: all of it goes
        store.commit("r1", [_frame(5)], step=StepRecord(1, 5, [["s", ["x"], 1]]))
    done = threading.Event()

    def other_writer() -> None:
        store.commit("r1", [_frame(2)], step=StepRecord(1, 2, [["s", ["x"], 2]]))
        done.set()

    thread = threading.Thread(target=other_writer)
    thread.start()
    thread.join(timeout=30)
    assert done.is_set()
    assert [f.seq for f in store.read_frames("r1")] == [1, 2]
    assert [s.delta for s in store.read_steps("r1")] == [[["s", ["x"], 2]]]
    assert store.get_run("r1").last_seq == 2
    store.close()


def test_a_database_error_inside_a_commit_is_a_store_error_and_rolls_back(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "kf.db")
    store.create_run(_run())
    with pytest.raises(StoreError), store._tx() as conn:
        conn.execute("INSERT INTO frames(run_id, seq, type, data) VALUES ('r1', 1, 't', '{}')")
        conn.execute("SELECT * FROM no_such_table")
    assert store.read_frames("r1") == []
    store.commit("r1", [_frame(1)])
    assert [f.seq for f in store.read_frames("r1")] == [1]
    store.close()


def test_a_failed_read_is_a_store_error_and_frees_the_store_for_another_thread(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "kf.db")
    store.create_run(_run())
    with pytest.raises(StoreError, match="damaged"), store._read() as conn:
        conn.execute("SELECT * FROM no_such_table")
    found: list[str] = []
    thread = threading.Thread(target=lambda: found.append(store.get_run("r1").id))
    thread.start()
    thread.join(timeout=30)
    assert found == ["r1"]
    store.close()


@pytest.mark.parametrize("level", ["FULL", "NORMAL"])
def test_a_repeatable_commit_skips_the_sync_a_full_store_makes_and_a_step_does_not(
    tmp_path: Path, level: str
) -> None:
    store = SQLiteStore(tmp_path / "kf.db", synchronous=level)
    store.create_run(_run())
    seen: list[str] = []
    store._conn.set_trace_callback(seen.append)
    store.commit("r1", [_frame(1)], run_fields={"status": RunStatus.RUNNING}, repeatable=True)
    reply = [s for s in seen if s.startswith("PRAGMA synchronous")]
    seen.clear()
    store.commit("r1", [_frame(2)], step=StepRecord(1, 2, []), repeatable=True)
    step = [s for s in seen if s.startswith("PRAGMA synchronous")]
    store._conn.set_trace_callback(None)
    # at FULL the reply's transaction commits without its sync, the next commit's sync makes
    # it durable; the step waits for its own (and NORMAL never syncs a commit)
    expected = ["PRAGMA synchronous=NORMAL", "PRAGMA synchronous=FULL"] if level == "FULL" else []
    assert reply == expected and step == []
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == (2 if level == "FULL" else 1)
    assert [f.seq for f in store.read_frames("r1")] == [1, 2]
    assert store.get_run("r1").status == RunStatus.RUNNING
    store.close()
