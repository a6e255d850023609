"""Versioned schema migrations for the SQLite store, applied in order when a database opens."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from kforge.errors import StoreError
from kforge.frames import upgrade_legacy_frame
from kforge.jsoncodec import dumps, loads

__all__ = ["MIGRATIONS", "apply_migrations", "schema_version", "upgrade_tool_frames"]


def upgrade_tool_frames(conn: sqlite3.Connection) -> None:
    """Rewrite logs of the old tool-call vocabulary (four frames per call) as one
    ``tool.call`` and one ``tool.result`` frame per call.

    The execution wrapper's ``tool.start`` becomes the call frame and takes the reasoning,
    iteration and plan of the agent's ``agent.tool_call`` before it; ``tool.success`` or
    ``tool.error`` becomes the result frame; the agent's copies are deleted (their seqs are
    left unused), and an observation points at its call by ``call_id``. A step re-executed
    after this sees the frames today's code emits, so old runs still resume.
    """
    rows = conn.execute(
        "SELECT run_id, seq, type, data FROM frames WHERE type IN ('tool.start', "
        "'tool.success', 'tool.error', 'agent.tool_call', 'agent.tool_result', "
        "'agent.observation') ORDER BY run_id, seq"
    ).fetchall()
    decisions: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    last_call: dict[tuple[str, str], str] = {}
    judged_call: dict[str, str] = {}
    for run_id, seq, kind, text in rows:
        data = loads(text)
        key = (run_id, str(data.get("tool_name", "")))
        if kind in ("agent.tool_call", "agent.tool_result"):
            if kind == "agent.tool_call":
                decisions[key].append(data)
            else:
                judged_call[str(data.get("id"))] = last_call.get(key, "")
            conn.execute("DELETE FROM frames WHERE run_id = ? AND seq = ?", (run_id, seq))
            continue
        if kind == "agent.observation":
            if "tool_result_frame_id" not in data:
                continue
            data["call_id"] = judged_call.get(str(data.pop("tool_result_frame_id")), "")
            upgraded = data
        else:
            upgraded = upgrade_legacy_frame({**data, "type": kind})
            if kind == "tool.start":
                if decisions[key]:
                    decision = decisions[key].pop(0)
                    for name in ("reasoning", "iteration", "plan_frame_id"):
                        upgraded[name] = decision.get(name, upgraded[name])
            else:
                last_call[key] = str(upgraded["call_id"])
        new_kind = str(upgraded.pop("type", kind))
        conn.execute(
            "UPDATE frames SET type = ?, data = ? WHERE run_id = ? AND seq = ?",
            (new_kind, dumps(upgraded), run_id, seq),
        )


MIGRATIONS: tuple[tuple[int, str | Callable[[sqlite3.Connection], None]], ...] = (
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
    (4, upgrade_tool_frames),
    (
        5,
        # the passage index (kforge.store.sqlite_passages): postings clustered by term, each
        # carrying its passage's length so that scoring needs no other row
        """
        CREATE TABLE search_indexes (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            passages INTEGER NOT NULL DEFAULT 0,
            terms INTEGER NOT NULL DEFAULT 0,
            chars INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE search_sources (
            index_id INTEGER NOT NULL,
            key TEXT NOT NULL,
            title_word TEXT NOT NULL,
            meta TEXT NOT NULL,
            PRIMARY KEY (index_id, key)
        ) WITHOUT ROWID;
        CREATE INDEX search_sources_title ON search_sources(index_id, title_word);
        CREATE TABLE search_passages (
            id INTEGER PRIMARY KEY,
            index_id INTEGER NOT NULL,
            passage TEXT NOT NULL,
            source TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            length INTEGER NOT NULL,
            chars INTEGER NOT NULL,
            terms TEXT NOT NULL,
            data TEXT NOT NULL
        );
        CREATE UNIQUE INDEX search_passages_id ON search_passages(index_id, passage);
        CREATE INDEX search_passages_source ON search_passages(index_id, source, ordinal);
        CREATE TABLE search_terms (
            index_id INTEGER NOT NULL,
            term TEXT NOT NULL,
            df INTEGER NOT NULL,
            PRIMARY KEY (index_id, term)
        ) WITHOUT ROWID;
        CREATE TABLE search_postings (
            index_id INTEGER NOT NULL,
            term TEXT NOT NULL,
            passage INTEGER NOT NULL,
            tf INTEGER NOT NULL,
            length INTEGER NOT NULL,
            PRIMARY KEY (index_id, term, passage)
        ) WITHOUT ROWID;
        """,
    ),
    (
        6,
        # each term's peaks (kforge.store.passages.Peaks): the least passage length at each tf,
        # which bound what the term adds to a score far closer than its weight
        """
        ALTER TABLE search_terms ADD COLUMN peaks TEXT NOT NULL DEFAULT '{}';
        UPDATE search_terms SET peaks = coalesce((
            SELECT json_group_object(tf, least) FROM (
                SELECT p.tf, min(p.length) AS least FROM search_postings p
                WHERE p.index_id = search_terms.index_id AND p.term = search_terms.term
                GROUP BY p.tf
            )
        ), '{}')
        """,
    ),
    (
        7,
        # how many writes each index has had: its version (``SQLitePassageStore.index_version``),
        # which the run log's commits, on another connection, leave as it is
        "ALTER TABLE search_indexes ADD COLUMN writes INTEGER NOT NULL DEFAULT 0",
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
            if callable(sql):
                sql(conn)
            else:
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
