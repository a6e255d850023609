"""Every store backend passes the conformance suite; the SQLite store's own file handling."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kforge.errors import (
    StoreError,
)
from kforge.store import SQLiteStore, Store
from kforge.store.conformance import StoreConformance, new_run, thinking
from kforge.store.migrations import MIGRATIONS, schema_version


class TestEveryStore(StoreConformance):
    """The conformance suite over the memory, SQLite and PostgreSQL stores."""

    @pytest.fixture
    def store(self, any_store: Store) -> Store:
        return any_store


def test_sqlite_survives_reopen_and_migrates_once(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    s = SQLiteStore(path)
    s.create_run(new_run())
    s.commit("r1", [thinking("r1", 1)])
    s.close()
    s = SQLiteStore(path)
    assert s.get_run("r1").last_seq == 1
    assert s.read_frames("r1")[0] == thinking("r1", 1) or s.read_frames("r1")[0].seq == 1
    s.close()
    conn = sqlite3.connect(path)
    assert schema_version(conn) == MIGRATIONS[-1][0]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_sqlite_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_version VALUES (999)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this kforge knows"):
        SQLiteStore(path)


def test_sqlite_reports_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open database"):
        SQLiteStore(path)


def test_a_version_1_database_gains_the_lease_columns(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for statement in MIGRATIONS[0][1].split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.execute(
        "INSERT INTO runs (id, agent_type, status, created_at, updated_at, input) "
        "VALUES ('old', 't', 'running', '2026-01-01T00:00:00+00:00', "
        "'2026-01-01T00:00:00+00:00', '{}')"
    )
    conn.close()
    s = SQLiteStore(path)
    run = s.get_run("old")
    assert run.lease_owner is None and not run.is_live()
    s.close()


def test_an_index_written_before_peaks_were_kept_gets_them_from_its_postings(
    tmp_path: Path,
) -> None:
    """A database whose passage index predates the terms' peaks (the least passage length at
    each tf) works them out from the postings when it migrates."""
    from kforge.store.conformance_passages import indexed_source

    path = tmp_path / "k.db"
    s = SQLiteStore(path)
    s.put_sources("c", [indexed_source("a", {"cat": 2, "dog": 1}, {"cat": 1}, {"cat": 2})])
    s.close()
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE search_terms DROP COLUMN peaks")
    conn.execute("ALTER TABLE search_indexes DROP COLUMN writes")
    conn.execute("DELETE FROM schema_version WHERE version >= 6")
    conn.commit()
    conn.close()
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT term, peaks FROM search_terms ORDER BY term").fetchall()
    conn.close()
    assert [(t, json.loads(p)) for t, p in rows] == [("cat", {"1": 1, "2": 2}), ("dog", {"1": 3})]
