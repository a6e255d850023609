"""How the PostgreSQL store holds its connections: one while it does one thing at a time (no
pool, no thread, the passage store not connected until used), more for uses that overlap, a
lost one made again, none after close."""

from __future__ import annotations

import threading

import pytest

from kforge.errors import StoreError
from kforge.frames import AgentThinking, utc_now
from kforge.store import RunRecord, RunStatus, StepRecord

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore  # noqa: E402


def new_run(run_id: str) -> RunRecord:
    now = utc_now()
    return RunRecord(run_id, "t", RunStatus.PENDING, now, now, {"args": {}})


def others_connected(url: str) -> list[int]:
    """Client connections to ``url``'s database, besides the one asking (an autovacuum worker
    may visit it too)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchall()
    return [int(r[0]) for r in rows]


def pool_threads() -> list[str]:
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith("kforge-") and ("-worker-" in t.name or t.name.endswith("-scheduler"))
    ]


def test_a_store_doing_one_thing_at_a_time_holds_one_connection_and_no_thread(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    store.create_run(new_run("r1"))
    store.commit("r1", [AgentThinking(run_id="r1", seq=1, message="a")], step=StepRecord(1, 1, []))
    run, _ = store.get_run_with_snapshot("r1")
    assert run.last_seq == 1 and [f.seq for f in store.read_frames("r1")] == [1]
    assert pool_threads() == []
    assert len(others_connected(postgres_url)) == 1
    # the passage store connects at its first use
    assert store.index_version("notes") == store.index_version("notes")
    assert len(others_connected(postgres_url)) == 2
    store.close()
    assert others_connected(postgres_url) == []


def test_uses_that_overlap_each_get_a_connection_and_all_commit(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, pool_size=3)
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def run_one(n: int) -> None:
        try:
            run_id = f"r{n}"
            start.wait()
            store.create_run(new_run(run_id))
            for seq in range(1, 21):
                frame = AgentThinking(run_id=run_id, seq=seq, message=str(seq))
                store.commit(run_id, [frame], step=StepRecord(seq, seq, []))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run_one, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert {r.id: r.last_seq for r in store.list_runs()} == {f"r{n}": 20 for n in range(6)}
    assert 1 <= len(others_connected(postgres_url)) <= 3
    store.close()
    assert pool_threads() == []


def test_a_connection_the_server_ended_is_made_again(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.create_run(new_run("r1"))
    (pid,) = others_connected(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))  # waits for its end
    with pytest.raises(StoreError, match="check that the server is up, then try again"):
        store.get_run("r1")
    assert store.get_run("r1").id == "r1"  # the next use connects again
    store.close()


def test_a_closed_store_says_so(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.close()
    with pytest.raises(StoreError, match="is closed; open it again"):
        store.get_run("r1")
