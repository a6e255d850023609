"""Writes of the PostgreSQL passage index beside other writers: a write the server aborts to
break a deadlock is tried again, and lands once."""

from __future__ import annotations

import threading
import time

import pytest

from kforge.store.conformance_passages import K1, B, indexed_source

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore  # noqa: E402


def _waiting_on_a_lock(conn: psycopg.Connection[tuple[object, ...]]) -> bool:
    """Whether a backend of this database waits for a lock to update the index's counts."""
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock' AND query LIKE 'UPDATE search_indexes%%'"
    ).fetchone()
    return bool(row and row[0])


def test_a_removal_the_server_aborts_to_break_a_deadlock_is_tried_again(
    postgres_url: str,
) -> None:
    """Another transaction holds the index's counts row while the removal holds its terms'
    rows and waits for it, then asks for one of those terms: the server aborts the removal
    (the first to wait sees the deadlock), which is tried again once the other commits."""
    store = PostgresStore(postgres_url)
    store.put_sources(
        "c", [indexed_source("a", {"cat": 2, "dog": 1}), indexed_source("b", {"cat": 1})]
    )
    failures: list[BaseException] = []

    def remove() -> None:
        try:
            store.delete_sources("c", ["a"])
        except BaseException as exc:  # handed to the test's thread
            failures.append(exc)

    with psycopg.connect(postgres_url) as other:
        other.execute("SET deadlock_timeout = '60s'")  # the removal is the one to see it
        other.execute("SET statement_timeout = '30s'")
        other.execute("UPDATE search_indexes SET passages = passages WHERE name = 'c'")
        remover = threading.Thread(target=remove)
        remover.start()
        with psycopg.connect(postgres_url, autocommit=True) as watcher:
            while not _waiting_on_a_lock(watcher):
                assert remover.is_alive(), failures
                time.sleep(0.01)
        # granted once the server aborted the removal, which held this term's row
        other.execute("UPDATE search_terms SET df = df WHERE term = 'cat'")
        other.commit()
    remover.join(timeout=60)
    assert not remover.is_alive() and failures == []
    assert list(store.index_sources("c")) == ["b"]
    assert [p for p, _ in store.search_passages("c", ["cat", "dog"], 5, k1=K1, b=B)] == ["b-0"]
    assert store.document_frequencies("c", ["cat", "dog"]) == {"cat": 1, "dog": 0}
    store.close()
