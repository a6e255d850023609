"""The store conformance suite: what every store must do, as pytest tests a third-party store
can run (like LangGraph's checkpoint conformance package), one class per protocol.

Subclass the class of the protocol your store implements in a test module and give its
``store`` fixture a new, empty store of yours; pytest collects and runs every test of the suite
against it::

    import pytest
    from kforge.store.conformance import RunLogConformance

    class TestMyRunLog(RunLogConformance):
        @pytest.fixture
        def store(self):
            store = MyRunLog(...)
            yield store
            store.close()

- ``RunLogConformance``: a ``kforge.store.base.RunLog`` (runs, frames, steps, snapshots,
  leases, and its documents), what ``Runtime(store=...)`` needs.
- ``PassageStoreConformance``: a ``kforge.store.passages.PassageStore`` (passage indexes
  searched by BM25, and its documents), what document retrieval needs.
- ``StoreConformance``: both at once (``kforge.store.combined.Store``), as every built-in store
  (memory, SQLite, PostgreSQL) is.

The suite needs pytest (``pip install 'kforge[conformance]'``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kforge.errors import (
    InvalidRunStateError,
    RunLeasedError,
    RunNotFoundError,
    StoreError,
    WriteConflictError,
)
from kforge.frames import AgentThinking, StatusChanged, utc_now
from kforge.store.base import RunLog, RunRecord, RunStatus, Snapshot, StepRecord
from kforge.store.combined import Store
from kforge.store.conformance_documents import DocumentStoreConformance, override_store
from kforge.store.conformance_passages import PassageStoreConformance, indexed_source
from kforge.store.lease import Lease

__all__ = [
    "PassageStoreConformance",
    "RunLogConformance",
    "StoreConformance",
    "indexed_source",
    "new_run",
    "thinking",
]


def new_run(run_id: str = "r1", **fields: object) -> RunRecord:
    """A pending run record ``run_id`` with ``fields`` set (any of RunRecord's)."""
    now = utc_now()
    return RunRecord(
        id=run_id,
        agent_type="t",
        status=RunStatus.PENDING,
        created_at=now,
        updated_at=now,
        input={"args": {"q": "x"}},
        **fields,  # type: ignore[arg-type]
    )


def thinking(run_id: str, seq: int) -> AgentThinking:
    """A frame of ``run_id`` at ``seq``."""
    return AgentThinking(run_id=run_id, seq=seq, message=f"m{seq}")


class RunLogConformance(DocumentStoreConformance):
    """What every ``RunLog`` must do; a subclass named ``Test...`` overrides ``store`` with a
    new, empty run log."""

    @pytest.fixture
    def store(self) -> Iterator[RunLog]:
        override_store(self)

    def test_create_get_and_list(self, store: RunLog) -> None:
        store.create_run(new_run("r1", session_id="s"))
        store.create_run(new_run("r2", parent_id="r1"))
        assert store.get_run("r1").input == {"args": {"q": "x"}}
        assert {r.id for r in store.list_runs()} == {"r1", "r2"}
        assert [r.id for r in store.list_runs(parent_id="r1")] == ["r2"]
        assert [r.id for r in store.list_runs(session_id="s")] == ["r1"]
        with pytest.raises(RunNotFoundError, match="kforge runs list"):
            store.get_run("nope")
        with pytest.raises(StoreError, match="already exists"):
            store.create_run(new_run("r1"))

    def test_every_run_field_round_trips(self, store: RunLog) -> None:
        """The SQLite store reads runs positionally: a column out of RunRecord's order shows here."""
        run = new_run(
            "r1",
            session_id="s",
            parent_id="p",
            iteration=3,
            max_iterations=9,
            pause_reason="why",
            pending_interaction={"prompt": "?"},
            result={"answer": 1},
            error="boom",
            forked_from="f",
            forked_at_seq=4,
        )
        store.create_run(run)
        got = store.get_run("r1")
        assert got == run
        assert [r.id for r in store.list_runs()] == ["r1"]
        store.commit("r1", [], run_fields={"status": RunStatus.AWAITING_USER})
        assert store.get_run("r1").status is RunStatus.AWAITING_USER

    def test_commit_appends_frames_step_and_fields_together(self, store: RunLog) -> None:
        store.create_run(new_run())
        store.commit(
            "r1",
            [thinking("r1", 1), thinking("r1", 2)],
            step=StepRecord(1, 2, [["s", ["x"], 1]]),
            run_fields={"status": RunStatus.RUNNING, "iteration": 1},
        )
        run = store.get_run("r1")
        assert (run.status, run.iteration, run.last_seq) == (RunStatus.RUNNING, 1, 2)
        assert [f.seq for f in store.read_frames("r1")] == [1, 2]
        assert [f.seq for f in store.read_frames("r1", after_seq=1)] == [2]
        assert store.read_steps("r1") == [StepRecord(1, 2, [["s", ["x"], 1]])]

    def test_gaps_and_foreign_frames_are_refused_and_nothing_is_written(
        self, store: RunLog
    ) -> None:
        store.create_run(new_run())
        with pytest.raises(StoreError, match="does not continue the log"):
            store.commit("r1", [thinking("r1", 2)], run_fields={"iteration": 9})
        with pytest.raises(StoreError, match="does not continue the log"):
            store.commit("r1", [thinking("other", 1)])
        assert store.read_frames("r1") == []
        assert store.get_run("r1").iteration == 0

    def test_snapshot_keeps_only_the_latest(self, store: RunLog) -> None:
        store.create_run(new_run())
        store.commit("r1", [], snapshot=Snapshot(1, 0, {"a": 1}))
        store.commit("r1", [], snapshot=Snapshot(2, 0, {"a": 2}))
        snap = store.latest_snapshot("r1")
        assert snap == Snapshot(2, 0, {"a": 2})

    def test_fork_copies_frames_and_steps_up_to_seq(self, store: RunLog) -> None:
        store.create_run(new_run())
        store.commit("r1", [thinking("r1", 1), thinking("r1", 2)], step=StepRecord(1, 2, []))
        store.commit("r1", [thinking("r1", 3)], step=StepRecord(2, 3, []))
        store.fork_run("r1", new_run("f1", forked_from="r1", forked_at_seq=2), upto_seq=2)
        assert [(f.run_id, f.seq) for f in store.read_frames("f1")] == [("f1", 1), ("f1", 2)]
        assert [s.step for s in store.read_steps("f1")] == [1]
        assert store.get_run("f1").last_seq == 2
        with pytest.raises(InvalidRunStateError, match="cannot fork at seq 9"):
            store.fork_run("r1", new_run("f2"), upto_seq=9)

    def test_prefixes_find_runs_and_deleting_runs_removes_their_records(
        self, store: RunLog
    ) -> None:
        for run_id in ("abc1", "abc2", "abd3"):
            store.create_run(new_run(run_id), [thinking(run_id, 1)])
            store.commit(run_id, [], step=StepRecord(1, 1, []), snapshot=Snapshot(1, 1, {"a": 1}))
        assert store.run_ids_with_prefix("ab") == ["abc1", "abc2", "abd3"]
        assert store.run_ids_with_prefix("abc", limit=1) == ["abc1"]
        assert store.run_ids_with_prefix("%") == [] and store.run_ids_with_prefix("abd3") == [
            "abd3"
        ]
        store.delete_runs(["abc1", "abd3"])
        assert [r.id for r in store.list_runs()] == ["abc2"]
        for gone in ("abc1", "abd3"):
            with pytest.raises(RunNotFoundError):
                store.get_run(gone)
            assert store.read_frames(gone) == [] and store.read_steps(gone) == []
            assert store.latest_snapshot(gone) is None
        assert len(store.read_frames("abc2")) == 1

    def test_status_change_frames_round_trip_through_the_store(self, store: RunLog) -> None:
        store.create_run(new_run())
        frame = StatusChanged(run_id="r1", seq=1, from_status=None, to_status="pending")
        store.commit("r1", [frame])
        assert store.read_frames("r1") == [frame]

    def test_lease_claimed_with_a_commit_refuses_other_live_writers(self, store: RunLog) -> None:
        store.create_run(new_run())
        mine = Lease(owner="elsewhere:1:aaa")
        store.commit("r1", [thinking("r1", 1)], lease=mine)
        run = store.get_run("r1")
        assert run.lease_owner == "elsewhere:1:aaa" and run.is_live()
        assert run.lease_expires_at is not None and run.heartbeat_at is not None
        with pytest.raises(RunLeasedError, match="lease held by elsewhere:1:aaa until") as info:
            store.commit("r1", [thinking("r1", 2)], lease=Lease(owner="elsewhere:2:bbb"))
        assert isinstance(info.value, WriteConflictError)
        assert store.get_run("r1").last_seq == 1  # nothing written
        assert store.renew_lease("r1", mine)
        assert not store.renew_lease("r1", Lease(owner="elsewhere:2:bbb"))
        store.commit("r1", [thinking("r1", 2)], lease=Lease(owner=mine.owner, release=True))
        assert store.get_run("r1").lease_owner is None
        assert not store.get_run("r1").is_live()

    def test_expired_or_dead_leases_are_taken_over(self, store: RunLog) -> None:
        store.create_run(new_run())
        store.commit("r1", [thinking("r1", 1)], lease=Lease(owner="elsewhere:1:aaa", ttl_s=-1))
        assert not store.get_run("r1").is_live()  # expired
        store.commit("r1", [thinking("r1", 2)], lease=Lease(owner="elsewhere:2:bbb"))
        assert store.get_run("r1").lease_owner == "elsewhere:2:bbb"
        store.commit(
            "r1",
            [thinking("r1", 3)],
            lease=Lease(owner="elsewhere:3:ccc", takeover="elsewhere:2:bbb"),
        )
        assert store.get_run("r1").lease_owner == "elsewhere:3:ccc"

    def test_a_seq_conflict_is_a_write_conflict(self, store: RunLog) -> None:
        store.create_run(new_run())
        store.commit("r1", [thinking("r1", 1)])
        with pytest.raises(WriteConflictError, match="another writer"):
            store.commit("r1", [thinking("r1", 1)])

    def test_a_repeatable_commit_is_a_commit_like_any_other(self, store: RunLog) -> None:
        store.create_run(new_run())
        store.commit("r1", [thinking("r1", 1)], repeatable=True)
        assert [f.seq for f in store.read_frames("r1")] == [1]
        with pytest.raises(WriteConflictError, match="another writer"):
            store.commit("r1", [thinking("r1", 1)], repeatable=True)
        store.commit("r1", [thinking("r1", 2)], step=StepRecord(1, 2, []), repeatable=True)
        assert store.get_run("r1").last_seq == 2 and len(store.read_steps("r1")) == 1

    def test_a_lease_is_given_up_only_by_its_owner(self, store: RunLog) -> None:
        store.create_run(new_run())
        store.commit("r1", [thinking("r1", 1)], lease=Lease(owner="elsewhere:1:aaa"))
        assert not store.renew_lease("r1", Lease(owner="elsewhere:2:bbb", release=True))
        assert store.get_run("r1").lease_owner == "elsewhere:1:aaa"
        assert store.renew_lease("r1", Lease(owner="elsewhere:1:aaa", release=True))
        assert store.get_run("r1").lease_owner is None


class StoreConformance(RunLogConformance, PassageStoreConformance):
    """Both suites, for a store that is a run log and a passage store at once (``Store``)."""

    @pytest.fixture
    def store(self) -> Iterator[Store]:
        override_store(self)
