"""A resume's read of its run and snapshot as each connection's own prepared statement, read in
binary: every column as the driver would read it, prepared and planned by the connection's
warm-up (no planning left for a resume's first statements), made again when the session lost
it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kforge.errors import RunNotFoundError
from kforge.frames import AgentThinking, utc_now
from kforge.store import RunRecord, RunStatus, Snapshot, StepRecord
from kforge.store.lease import Lease, new_owner

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore  # noqa: E402


def plans(store: PostgresStore) -> dict[str, tuple[int, int]]:
    """(generic, custom) plans the server made of each statement the store's connection
    prepared."""
    rows = store._first.execute(
        "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements "
        "WHERE name LIKE 'kforge%'"
    ).fetchall()
    return {str(name): (int(generic), int(custom)) for name, generic, custom in rows}


def test_the_run_with_its_snapshot_reads_as_the_driver_reads_the_run(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    try:
        now = utc_now()
        run = RunRecord(
            "r-ü",
            "agent",
            RunStatus.PENDING,
            now - timedelta(days=400, microseconds=7),
            now,
            {"args": {"q": "naïve ✓"}},
            session_id="s1",
            parent_id="p1",
            max_iterations=9,
            pause_reason="asked",
            pending_interaction={"question": "ü?"},
            error="earlier",
            forked_from="f1",
            forked_at_seq=3,
        )
        store.create_run(run)
        state = {"history": ['ünï {,} "x" \\'], "n": 2**40, "x": 0.1}
        store.commit(
            "r-ü",
            [AgentThinking(run_id="r-ü", seq=1, message="m")],
            step=StepRecord(1, 1, [["s", ["n"], 1]]),
            snapshot=Snapshot(1, 1, state),
            run_fields={"iteration": 1, "result": {"a": [1, 2.5, None]}},
            lease=Lease(owner=new_owner(), ttl_s=30.0),
        )
        read, snapshot = store.get_run_with_snapshot("r-ü")
        assert read == store.get_run("r-ü")  # the driver's own read
        assert read.created_at == run.created_at and read.forked_at_seq == 3
        assert isinstance(read.lease_expires_at, float) and isinstance(read.heartbeat_at, float)
        assert snapshot is not None and (snapshot.step, snapshot.seq) == (1, 1)
        assert snapshot.state == state
        store.create_run(RunRecord("bare", "agent", RunStatus.PENDING, now, now, {}))
        assert store.get_run_with_snapshot("bare") == (store.get_run("bare"), None)
        with pytest.raises(RunNotFoundError):
            store.get_run_with_snapshot("nobody")
    finally:
        store.close()


def test_a_warm_connection_plans_its_statements_once_before_their_first_use(
    postgres_url: str,
) -> None:
    PostgresStore(postgres_url).close()  # the first open migrates the database
    store = PostgresStore(postgres_url)
    try:
        warmed = plans(store)
        assert set(warmed) == {"kforge_commit_1", "kforge_commit_lazy_1", "kforge_run_1"}
        assert all(generic == 1 and custom == 0 for generic, custom in warmed.values())
        now = utc_now()
        store.create_run(RunRecord("r1", "agent", RunStatus.PENDING, now, now, {}))
        for seq in (1, 2, 3):
            thinking = [AgentThinking(run_id="r1", seq=seq, message="m")]
            store.commit("r1", thinking, repeatable=True)
            store.get_run_with_snapshot("r1")
        store.commit("r1", [], step=StepRecord(1, 3, []))
        # each use took the plan the warm-up made (else the server plans each statement again
        # at each of its first five uses on a connection)
        assert plans(store) == {
            "kforge_commit_1": (2, 0),
            "kforge_commit_lazy_1": (4, 0),
            "kforge_run_1": (4, 0),
        }
    finally:
        store.close()


def test_the_read_prepares_its_statement_again_when_the_session_lost_it(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    try:
        now = utc_now()
        store.create_run(RunRecord("r1", "agent", RunStatus.PENDING, now, now, {}))
        store._first.execute("DEALLOCATE ALL")  # what a pool's reset does
        assert store.get_run_with_snapshot("r1")[0].id == "r1"
        assert "kforge_run_1" in plans(store)
    finally:
        store.close()
