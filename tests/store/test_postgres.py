"""What only the PostgreSQL store does: migrate once under concurrent opens, refuse a newer
schema, name an unreachable server without its password, notify listeners of each commit (and
stop listening at once), keep
frames and deltas packed and still read those stored as text before."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kforge.errors import StoreError
from kforge.frames import AgentThinking, utc_now
from kforge.jsoncodec import dumps
from kforge.store import RunRecord, RunStatus, StepRecord
from kforge.store.conformance_passages import K1, B, indexed_source
from kforge.store.postgres_schema import FRAMES_CHANNEL, MIGRATIONS, PASSAGE_VERSIONS
from tests.postgres import migrate_to

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.open import open_store  # noqa: E402
from kforge.store.postgres import PostgresStore, redact_url  # noqa: E402


def new_run(run_id: str) -> RunRecord:
    now = utc_now()
    return RunRecord(run_id, "t", RunStatus.PENDING, now, now, {"args": {}})


def test_processes_opening_one_database_at_once_migrate_it_once(postgres_url: str) -> None:
    errors: list[BaseException] = []
    stores: list[PostgresStore] = []

    def open_one() -> None:
        try:
            stores.append(PostgresStore(postgres_url, pool_size=1))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(postgres_url) as conn:
        versions = conn.execute("SELECT version FROM kforge_schema_version").fetchall()
    assert sorted(versions) == [(v,) for v, _ in MIGRATIONS if v not in PASSAGE_VERSIONS]
    for s in stores:
        s.close()


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {str(r[0]) for r in rows}


def _versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version FROM kforge_schema_version ORDER BY version")
        return [int(r[0]) for r in rows]


def test_a_database_that_only_holds_runs_has_no_passage_tables(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.create_run(new_run("r1"))
    store.commit("r1", [AgentThinking(run_id="r1", seq=1, message="a")], step=StepRecord(1, 1, []))
    store.close()
    assert not {t for t in _tables(postgres_url) if t.startswith("search_")}
    assert PASSAGE_VERSIONS.isdisjoint(_versions(postgres_url))


def test_the_first_search_of_a_store_without_a_corpus_finds_nothing_then_ingest_works(
    postgres_url: str,
) -> None:
    PostgresStore(postgres_url).close()
    store = PostgresStore(postgres_url)
    assert store.search_passages("c", ["cat"], 5, k1=K1, b=B) == []
    assert store.index_sources("c") == {}
    store.put_sources("c", [indexed_source("a", {"cat": 2})])
    assert [p for p, _ in store.search_passages("c", ["cat"], 5, k1=K1, b=B)] == ["a-0"]
    store.close()
    assert _versions(postgres_url) == [v for v, _ in MIGRATIONS]
    store = PostgresStore(postgres_url)  # a later open keeps them
    assert [p for p, _ in store.search_passages("c", ["cat"], 5, k1=K1, b=B)] == ["a-0"]
    store.close()


def test_a_database_of_a_kforge_that_made_the_passage_tables_at_once_keeps_them(
    postgres_url: str,
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        migrate_to(conn, 8)
    store = PostgresStore(postgres_url)
    store.put_sources("c", [indexed_source("a", {"cat": 2})])
    assert [p for p, _ in store.search_passages("c", ["cat"], 5, k1=K1, b=B)] == ["a-0"]
    store.close()
    assert _versions(postgres_url) == [v for v, _ in MIGRATIONS]


def test_an_older_database_with_passage_tables_takes_their_later_migrations_on_open(
    postgres_url: str,
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        migrate_to(conn, 4)
    PostgresStore(postgres_url).close()  # runs only: the passage tables are there already
    assert _versions(postgres_url) == [v for v, _ in MIGRATIONS]
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_name = 'search_terms' AND column_name = 'peaks'"
        ).fetchone()
    assert row == (1,)


def test_a_newer_schema_is_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO kforge_schema_version VALUES (999)")
    with pytest.raises(StoreError, match="newer than this kforge knows"):
        PostgresStore(postgres_url)


def test_an_unreachable_server_is_named_without_its_password() -> None:
    url = "postgresql://kf:s3cret@127.0.0.1:1/kforge"
    with pytest.raises(StoreError, match="cannot open PostgreSQL database") as info:
        open_store(url)
    assert "s3cret" not in str(info.value) and "kf:***@127.0.0.1:1" in str(info.value)
    assert "scripts/postgres start" in str(info.value)
    assert redact_url("postgresql://u@h/d") == "postgresql://u@h/d"


def test_a_url_opens_the_postgres_store(postgres_url: str) -> None:
    store = open_store(postgres_url)
    assert isinstance(store, PostgresStore) and "PostgresStore" in repr(store)
    store.close()


def test_each_commit_notifies_the_run_and_its_last_seq(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as listener:
        listener.execute(f"LISTEN {FRAMES_CHANNEL}")
        store.create_run(new_run("r1"))
        store.commit(
            "r1",
            [
                AgentThinking(run_id="r1", seq=1, message="a"),
                AgentThinking(run_id="r1", seq=2, message="b"),
            ],
            step=StepRecord(1, 2, []),
        )
        store.commit("r1", [], snapshot=None, run_fields={"status": RunStatus.RUNNING})
        store.commit("r1", [], step=StepRecord(2, 2, []))  # no frames, no fields: no notice
        got = [n.payload for n in listener.notifies(timeout=1.0, stop_after=2)]
    assert got == ["r1 2", "r1 2"]
    store.close()


def test_commit_notices_arrive_and_stop_ends_the_listener_however_long_it_waits(
    postgres_url: str,
) -> None:
    from kforge.store.postgres_events import CommitNotices

    store = PostgresStore(postgres_url)
    got: list[tuple[str | None, int]] = []
    arrived = threading.Event()

    def on_notice(run_id: str | None, seq: int) -> None:
        got.append((run_id, seq))
        arrived.set()

    # an hour between looks at the connection: only the socket's data or stop() wake it
    notices = CommitNotices(postgres_url, on_notice, poll_s=3600.0)
    notices.start()
    store.create_run(new_run("r1"))
    store.commit("r1", [AgentThinking(run_id="r1", seq=1, message="a")], step=StepRecord(1, 1, []))
    assert arrived.wait(30)
    notices.stop()
    assert got == [("r1", 1)]
    assert not [t for t in threading.enumerate() if t.name == "kforge-notices"]
    notices.stop()  # twice is harmless
    store.close()


def test_records_stored_as_text_before_packing_read_back_after_the_upgrade(
    postgres_url: str,
) -> None:
    from kforge.jsoncodec import dumps
    from kforge.store.records import checksum

    frame = AgentThinking(message="stored as text", run_id="old", seq=1)
    delta = [["s", ["agent"], {"note": "a delta stored as text"}]]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kforge_schema_version (version integer NOT NULL)")
        for statement in MIGRATIONS[0][1]:
            conn.execute(statement)
        conn.execute("INSERT INTO kforge_schema_version VALUES (1)")
        now = utc_now()
        conn.execute(
            "INSERT INTO runs(id, agent_type, status, created_at, updated_at, input, last_seq) "
            "VALUES ('old', 't', 'paused', %s, %s, '{}', 1)",
            (now, now),
        )
        body = dumps(
            {"id": frame.id, "created_at": frame.created_at.isoformat(), "message": frame.message}
        )
        conn.execute("INSERT INTO frames VALUES ('old', 1, %s, %s)", (frame.type, body))
        text = dumps(delta)
        conn.execute("INSERT INTO steps VALUES ('old', 1, 1, %s, %s)", (text, checksum(text)))
    store = PostgresStore(postgres_url)
    try:
        assert store.read_frames("old") == [frame]
        assert [s.delta for s in store.read_steps("old", after_step=0)] == [delta]
        # new records are packed, and both kinds read back together
        store.commit(
            "old",
            [AgentThinking(message="packed " * 40, run_id="old", seq=2)],
            step=StepRecord(2, 2, [["s", ["agent", "note"], "packed " * 40]]),
        )
        with psycopg.connect(postgres_url) as conn:
            stored = conn.execute("SELECT data FROM frames WHERE seq = 2").fetchone()[0]
        assert bytes(stored)[:1] == b"\x01"
        assert [f.message for f in store.read_frames("old")] == [  # type: ignore[attr-defined]
            "stored as text",
            "packed " * 40,
        ]
        assert len(store.read_steps("old", after_step=0)) == 2
    finally:
        store.close()


def history(n: int) -> dict[str, object]:
    """A state like an agent's: a long conversation, JSON that compresses well."""
    return {
        "messages": [
            {"role": "tool", "content": f"result {i}: the total is {i + 1}", "id": f"call_{i}"}
            for i in range(n)
        ]
    }


def toast_bytes(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE relname = 'snapshots'"
        ).fetchone()
    return int(row[0])


def test_a_snapshot_is_kept_compressed_in_its_own_row(postgres_url: str) -> None:
    from kforge.store import Snapshot

    store = PostgresStore(postgres_url)
    store.create_run(new_run("r1"))
    for step in (1, 2, 3):
        frame = AgentThinking(run_id="r1", seq=step, message="a")
        state = history(200 * step)  # 14 to 43 KB of JSON, 2 to 7 KB compressed
        store.commit("r1", [frame], snapshot=Snapshot(step, step, state))
    assert toast_bytes(postgres_url) == 0
    _, snapshot = store.get_run_with_snapshot("r1")
    assert snapshot is not None and snapshot.state == history(600)
    store.close()


def test_a_snapshot_stored_out_of_line_before_the_upgrade_reads_back(postgres_url: str) -> None:
    from kforge.store.records import checksum

    state = history(1000)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        migrate_to(conn, 6)
        now = utc_now()
        conn.execute(
            "INSERT INTO runs(id, agent_type, status, created_at, updated_at, input, last_seq) "
            "VALUES ('old', 't', 'paused', %s, %s, '{}', 1)",
            (now, now),
        )
        text = dumps(state)
        conn.execute("INSERT INTO snapshots VALUES ('old', 1, 1, %s, %s)", (text, checksum(text)))
    assert toast_bytes(postgres_url) > 0
    store = PostgresStore(postgres_url)
    try:
        assert store.latest_snapshot("old") is not None
        assert store.latest_snapshot("old").state == state  # type: ignore[union-attr]
    finally:
        store.close()


def test_a_repeatable_commit_does_not_wait_for_the_wal_flush_and_a_step_does(
    postgres_url: str,
) -> None:
    from kforge.store.postgres_commit import commit_values, send_commit

    store = PostgresStore(postgres_url, warm=False)
    store.create_run(new_run("r1"))
    sent: list[bool] = []

    def noting(conn: Any, values: Any, *, lazy: bool) -> Any:
        sent.append(lazy)
        return send_commit(conn, values, lazy=lazy)

    store._send_commit = noting
    # a model's reply with a stretch's opening (run fields) nobody waits to see durable
    reply = AgentThinking(run_id="r1", seq=1, message="a model's reply")
    store.commit("r1", [reply], run_fields={"status": RunStatus.RUNNING}, repeatable=True)
    step = AgentThinking(run_id="r1", seq=2, message="b")
    store.commit("r1", [step], step=StepRecord(1, 2, []), repeatable=True)
    assert sent == [True, False]
    assert [f.seq for f in store.read_frames("r1")] == [1, 2]
    assert store.get_run("r1").status == RunStatus.RUNNING
    store.close()
    # the statement's transaction commits without waiting for the flush, as one does
    with psycopg.connect(postgres_url) as conn:
        now = utc_now()
        conn.execute(
            "INSERT INTO runs(id, agent_type, status, created_at, updated_at, input) "
            "VALUES ('r2', 't', 'running', %s, %s, '{}')",
            (now, now),
        )
        values = commit_values("r2", [1], ["x"], [b"{}"], None, None, "{}", None, None, 0.0)
        assert send_commit(conn, values, lazy=True)[0] == "ok"
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
        conn.commit()
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
