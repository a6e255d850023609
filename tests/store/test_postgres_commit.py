"""The PostgreSQL step commit as each connection's own prepared statement: prepared by the
connection's warm-up (or at its first commit), made again when the session lost it, and every
parameter read back as it was sent."""

from __future__ import annotations

import pytest

from kforge.errors import RunLeasedError
from kforge.frames import AgentThinking, utc_now
from kforge.store import RunRecord, RunStatus, Snapshot, StepRecord
from kforge.store.lease import Lease, new_owner

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore  # noqa: E402
from tests.postgres import migrate_to  # noqa: E402


def new_run(run_id: str) -> RunRecord:
    now = utc_now()
    return RunRecord(run_id, "t", RunStatus.PENDING, now, now, {"args": {}})


def prepared_names(store: PostgresStore) -> set[str]:
    """The statements the store's connection has prepared in its session."""
    rows = store._first.execute("SELECT name FROM pg_prepared_statements").fetchall()
    return {str(name) for (name,) in rows}


def test_a_commit_runs_as_a_statement_its_connection_prepared_once(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, warm=False)
    try:
        store.create_run(new_run("r1"))
        for seq in (1, 2, 3):
            thinking = AgentThinking(run_id="r1", seq=seq, message=f"m{seq}")
            store.commit("r1", [thinking], step=StepRecord(seq, seq, [["s", ["n"], seq]]))
        store.commit("r1", [AgentThinking(run_id="r1", seq=4, message="r")], repeatable=True)
        assert {"kforge_commit_1", "kforge_commit_lazy_1"} <= prepared_names(store)
        assert [f.seq for f in store.read_frames("r1")] == [1, 2, 3, 4]
        assert [s.delta for s in store.read_steps("r1")] == [[["s", ["n"], n]] for n in (1, 2, 3)]
    finally:
        store.close()


def test_a_warm_connection_has_the_commit_statements_before_its_first_commit(
    postgres_url: str,
) -> None:
    PostgresStore(postgres_url).close()  # the first open migrates the database
    store = PostgresStore(postgres_url)
    try:
        assert {"kforge_commit_1", "kforge_commit_lazy_1"} <= prepared_names(store)
        store.create_run(new_run("r1"))
        store.commit("r1", [AgentThinking(run_id="r1", seq=1, message="a")], repeatable=True)
        assert [f.seq for f in store.read_frames("r1")] == [1]
        # the warm-up's throwaway run is gone
        assert [r.id for r in store.list_runs()] == ["r1"]
    finally:
        store.close()


def test_a_database_migrated_on_open_warms_the_connection_once_more(postgres_url: str) -> None:
    # the one-trip check prepares the statements on the old schema, then finds it out of date:
    # after the migration the connection is warmed again, over statements it already has
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        migrate_to(conn, 8)
    store = PostgresStore(postgres_url)
    try:
        store.create_run(new_run("r1"))
        store.commit(
            "r1", [AgentThinking(run_id="r1", seq=1, message="a")], step=StepRecord(1, 1, [])
        )
        assert store.get_run("r1").last_seq == 1
    finally:
        store.close()


def test_a_commit_prepares_its_statement_again_when_the_session_lost_it(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    try:
        store.create_run(new_run("r1"))
        store.commit("r1", [AgentThinking(run_id="r1", seq=1, message="a")])
        store._first.execute("DEALLOCATE ALL")  # what a pool's reset does
        store.commit("r1", [AgentThinking(run_id="r1", seq=2, message="b")])
        assert [f.seq for f in store.read_frames("r1")] == [1, 2]
    finally:
        store.close()


def test_every_parameter_of_a_commit_reads_back(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    other = PostgresStore(postgres_url)
    try:
        store.create_run(new_run("r-ü"))
        owner = new_owner()  # this process's: live
        state = {"text": 'naïve ✓ \\ "quoted" {braces}', "n": 2**40, "x": 0.1}
        store.commit(
            "r-ü",
            [
                AgentThinking(run_id="r-ü", seq=1, message='ünï {,} "x" \\'),
                AgentThinking(run_id="r-ü", seq=2, message=""),
            ],
            step=StepRecord(1, 2, [["s", ["text"], state["text"]]]),
            snapshot=Snapshot(1, 2, state),
            run_fields={"status": RunStatus.RUNNING, "result": {"a": "ü"}, "iteration": 3},
            lease=Lease(owner=owner, ttl_s=30.0),
        )
        run, snapshot = store.get_run_with_snapshot("r-ü")
        assert (run.status, run.result, run.iteration, run.last_seq) == (
            RunStatus.RUNNING,
            {"a": "ü"},
            3,
            2,
        )
        assert run.lease_owner == owner
        assert snapshot is not None and (snapshot.step, snapshot.seq) == (1, 2)
        assert snapshot.state == state
        frames = store.read_frames("r-ü")
        assert [getattr(f, "message", None) for f in frames] == ['ünï {,} "x" \\', ""]
        assert store.read_steps("r-ü")[0].delta == [["s", ["text"], state["text"]]]
        # another owner is refused while the lease lives, told who holds it until when
        with pytest.raises(RunLeasedError) as refused:
            other.commit(
                "r-ü",
                [AgentThinking(run_id="r-ü", seq=3, message="c")],
                lease=Lease(owner="other", ttl_s=30.0),
            )
        assert refused.value.owner == owner
        # its release clears the lease
        store.commit("r-ü", [], lease=Lease(owner=owner, ttl_s=30.0, release=True))
        assert store.get_run("r-ü").lease_owner is None
    finally:
        other.close()
        store.close()
