"""The SQLite run log's statements: a resumed stretch's first reads and commits compile none on
the store's connection (they were compiled when it opened), and a commit makes no cursor."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kforge.frames import AgentThinking, utc_now
from kforge.store import RunRecord, RunStatus, SQLiteStore, StepRecord
from kforge.store.base import Snapshot
from kforge.store.lease import Lease


def _run() -> RunRecord:
    now = utc_now()
    return RunRecord(
        id="r1", agent_type="t", status=RunStatus.PENDING, created_at=now, updated_at=now
    )


def _frame(seq: int) -> AgentThinking:
    return AgentThinking(run_id="r1", seq=seq, message=f"m{seq}")


def _paused(path: Path) -> None:
    store = SQLiteStore(path)
    store.create_run(_run())
    store.commit(
        "r1",
        [_frame(1)],
        step=StepRecord(1, 1, [["s", ["x"], 1]]),
        snapshot=Snapshot(1, 1, {"x": 1}),
        run_fields={"status": RunStatus.AWAITING_USER, "iteration": 1},
    )
    store.close()


def _resume(store: SQLiteStore) -> None:
    """What a resumed stretch asks of the store until its first step is committed."""
    run, snapshot = store.get_run_with_snapshot("r1")
    assert run.status == RunStatus.AWAITING_USER
    assert snapshot is not None and snapshot.state == {"x": 1}
    opening = {
        "status": RunStatus.RUNNING,
        "pause_reason": None,
        "error": None,
        "pending_interaction": None,
    }
    store.commit("r1", [_frame(2)], run_fields=opening, lease=Lease(owner="h:1:a"))
    store.commit("r1", [_frame(3)], repeatable=True)
    store.commit(
        "r1", [_frame(4)], step=StepRecord(2, 4, [["s", ["x"], 2]]), run_fields={"iteration": 2}
    )


def test_a_resume_compiles_no_statement_on_the_store_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kf.db"
    _paused(path)
    compiled: list[tuple[Any, ...]] = []
    connect = sqlite3.connect

    def authorizing(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        # SQLite asks the authorizer about each statement it compiles, never when one runs
        conn.set_authorizer(lambda *asked: compiled.append(asked) or sqlite3.SQLITE_OK)
        return conn

    monkeypatch.setattr(sqlite3, "connect", authorizing)
    store = SQLiteStore(path)
    compiled.clear()
    _resume(store)
    assert compiled == []
    run = store.get_run("r1")
    assert (run.status, run.iteration, run.last_seq) == (RunStatus.RUNNING, 2, 4)
    assert [f.seq for f in store.read_frames("r1")] == [1, 2, 3, 4]
    store.close()


class _CountingConnection:
    """A connection that counts the statements run through its own ``execute``s (each makes a
    new cursor)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.executed = 0

    def execute(self, *args: Any) -> sqlite3.Cursor:
        self.executed += 1
        return self._conn.execute(*args)

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        self.executed += 1
        return self._conn.executemany(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_a_stretch_reads_and_commits_through_the_store_s_own_cursors(tmp_path: Path) -> None:
    path = tmp_path / "kf.db"
    _paused(path)
    store = SQLiteStore(path)
    counting = _CountingConnection(store._conn)
    store._conn = counting  # type: ignore[assignment]
    store._transaction._conn = counting  # type: ignore[assignment]
    _resume(store)
    assert counting.executed == 0
    assert [s.step for s in store.read_steps("r1")] == [1, 2]
    store.close()
