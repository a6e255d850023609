"""How the PostgreSQL store holds its connections: one while it does one thing at a time (no
pool, no thread, the passage store not connected until used), more for uses that overlap, a
lost one made again, none after close."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kforge.errors import StoreError
from kforge.frames import AgentThinking, utc_now
from kforge.store import RunRecord, RunStatus, StepRecord

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore  # noqa: E402


def new_run(run_id: str) -> RunRecord:
    now = utc_now()
    return RunRecord(run_id, "t", RunStatus.PENDING, now, now, {"args": {}})


def others_connected(url: str, expect: int | None = None) -> list[int]:
    """Client connections to ``url``'s database, besides the one asking (an autovacuum worker
    may visit it too). With ``expect``, asked again for up to five seconds until that many are
    listed: the server process of a connection a client closed ends a moment later."""
    deadline = time.monotonic() + 5.0
    while True:
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
            ).fetchall()
        if expect is None or len(rows) == expect or time.monotonic() > deadline:
            return [int(r[0]) for r in rows]
        time.sleep(0.02)


def pool_threads() -> list[str]:
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith("kforge-") and ("-worker-" in t.name or t.name.endswith("-scheduler"))
    ]


@contextmanager
def round_trips(monkeypatch: pytest.MonkeyPatch, trace: Path) -> Iterator[list[int]]:
    """The round trips of the connections made in the block (libpq's trace of what each sends:
    a simple query or a pipeline's sync waits for the server), in its last item at the end."""
    from psycopg.pq import Trace

    made: list[Any] = []
    connect = psycopg.connect

    def traced(*args: Any, **kwargs: Any) -> Any:
        conn = connect(*args, **kwargs)
        conn.pgconn.trace(out.fileno())
        conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)
        made.append(conn)
        return conn

    counted: list[int] = []
    with trace.open("w") as out:
        monkeypatch.setattr(psycopg, "connect", traced)
        yield counted
        monkeypatch.undo()
        for conn in made:
            conn.pgconn.untrace()
    sent = [line.split("\t") for line in trace.read_text().splitlines()]
    counted.append(sum(1 for m in sent if m[0] == "F" and m[2] in ("Query", "Sync")))


def test_opening_a_store_checks_the_schema_and_warms_its_connection_in_one_round_trip(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    PostgresStore(postgres_url).close()  # the first open migrates the database
    with round_trips(monkeypatch, tmp_path / "trace") as counted:
        store = PostgresStore(postgres_url)
    assert counted == [1]
    # the warm-up left nothing behind, and the store works on the connection it warmed
    store.create_run(new_run("r1"))
    store.commit("r1", [AgentThinking(run_id="r1", seq=1, message="a")], step=StepRecord(1, 1, []))
    assert [r.id for r in store.list_runs()] == ["r1"]
    assert store.get_run("r1").last_seq == 1
    store.close()


def test_opening_a_store_on_an_empty_database_migrates_it_then_warms(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="psycopg"):
        store = PostgresStore(postgres_url)  # the one-trip check fails: no schema yet
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    store.create_run(new_run("r1"))
    assert store.get_run("r1").status == RunStatus.PENDING
    store.close()
    with psycopg.connect(postgres_url) as conn:
        (left,) = conn.execute("SELECT count(*) FROM runs WHERE id LIKE 'kforge-warm-%'").fetchone()
    assert left == 0


def test_a_store_doing_one_thing_at_a_time_holds_one_connection_and_no_thread(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    store.create_run(new_run("r1"))
    store.commit("r1", [AgentThinking(run_id="r1", seq=1, message="a")], step=StepRecord(1, 1, []))
    run, _ = store.get_run_with_snapshot("r1")
    assert run.last_seq == 1 and [f.seq for f in store.read_frames("r1")] == [1]
    assert pool_threads() == []
    assert len(others_connected(postgres_url, expect=1)) == 1
    # the passage store connects at its first use
    assert store.index_version("notes") == store.index_version("notes")
    assert len(others_connected(postgres_url, expect=2)) == 2
    store.close()
    assert others_connected(postgres_url, expect=0) == []


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
    (pid,) = others_connected(postgres_url, expect=1)
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
