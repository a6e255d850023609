"""Versioned schema migrations for the SQLite store, applied in order when a database opens."""

from __future__ import annotations

import sqlite3

from kforge.errors import StoreError

__all__ = ["MIGRATIONS", "apply_migrations", "schema_version"]

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            agent_type TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            input TEXT NOT NULL,
            session_id TEXT,
            parent_id TEXT,
            iteration INTEGER NOT NULL DEFAULT 0,
            max_iterations INTEGER NOT NULL DEFAULT 0,
            pause_reason TEXT,
            pending_interaction TEXT,
            result TEXT,
            error TEXT,
            forked_from TEXT,
            forked_at_seq INTEGER,
            last_seq INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX runs_status ON runs(status);
        CREATE INDEX runs_parent ON runs(parent_id);
        CREATE INDEX runs_session ON runs(session_id);
        CREATE TABLE frames (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID;
        CREATE TABLE steps (
            run_id TEXT NOT NULL,
            step INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            delta TEXT NOT NULL,
            PRIMARY KEY (run_id, step)
        ) WITHOUT ROWID;
        CREATE TABLE snapshots (
            run_id TEXT PRIMARY KEY,
            step INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            state TEXT NOT NULL
        );
        CREATE TABLE docs (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (namespace, key)
        ) WITHOUT ROWID;
        """,
    ),
    (
        2,
        """
        ALTER TABLE runs ADD COLUMN lease_owner TEXT;
        ALTER TABLE runs ADD COLUMN lease_expires_at REAL;
        ALTER TABLE runs ADD COLUMN heartbeat_at REAL;
        """,
    ),
    (
        3,
        """
        ALTER TABLE steps ADD COLUMN checksum INTEGER;
        ALTER TABLE snapshots ADD COLUMN checksum INTEGER;
        """,
    ),
)


def schema_version(conn: sqlite3.Connection) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def apply_migrations(conn: sqlite3.Connection) -> int:
    """Bring the schema up to date; returns the version now in force."""
    current = schema_version(conn)
    latest = MIGRATIONS[-1][0]
    if current > latest:
        raise StoreError(
            f"database schema version {current} is newer than this kforge knows ({latest}); "
            "upgrade kforge or use another database file"
        )
    for version, sql in MIGRATIONS:
        if version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in sql.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_version(version) VALUES (?)", (version,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        current = version
    return current
