"""The SQLite run log: the default, a single file in WAL mode, one transaction per step."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from kforge.errors import (
    InvalidRunStateError,
    RunLeasedError,
    RunNotFoundError,
    StateCorruptionError,
    StoreError,
    WriteConflictError,
)
from kforge.frames import Frame, frame_body_json, utc_now
from kforge.jsoncodec import dumps
from kforge.store.base import (
    UPDATABLE_RUN_FIELDS,
    RunRecord,
    RunStatus,
    Snapshot,
    StepRecord,
)
from kforge.store.lease import Lease, lease_is_live
from kforge.store.records import (
    JSON_RUN_FIELDS,
    RUN_COLUMNS,
    checksum,
    decode_frames,
    decode_snapshot,
    decode_steps,
    run_filter,
    run_from_row,
    run_row,
)
from kforge.store.sqlite_database import SQLiteDatabase

__all__ = ["SQLiteRunLog"]

_SYNCED = frozenset({"FULL", "EXTRA"})
"""Levels at which a commit waits for its sync, which a repeatable commit may skip."""

_GET_RUN = f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?"
_GET_SNAPSHOT = "SELECT step, seq, CAST(state AS BLOB), checksum FROM snapshots WHERE run_id = ?"
_INSERT_FRAMES = "INSERT INTO frames(run_id, seq, type, data) VALUES (?,?,?,?)"
_INSERT_STEP = "INSERT OR REPLACE INTO steps(run_id, step, seq, delta, checksum) VALUES (?,?,?,?,?)"
_USUAL_UPDATES: tuple[tuple[tuple[str, ...], bool, bool], ...] = (
    (("status", "pause_reason", "error", "pending_interaction"), True, True),  # a resume's opening
    ((), True, False),  # a model's reply
    (("iteration",), True, False),  # a step
)
"""The run UPDATEs (``_update_statement``'s keys) of a resumed stretch's first step."""


def _update_statement(fields: tuple[str, ...], frames: bool, lease: bool) -> str:
    """The UPDATE of a run's ``fields`` (and ``updated_at``), its log position when frames are
    added (matching only while the log ends just before them) and its lease (matching only
    while no other live writer holds the run)."""
    unknown = set(fields) - UPDATABLE_RUN_FIELDS
    if unknown:
        raise StoreError(f"cannot update run fields {sorted(unknown)}")
    sets = [f"{name} = ?" for name in ("updated_at", *fields)] if fields else []
    where = ["id = ?"]
    if frames:
        sets.append("last_seq = ?")
        where.append("last_seq = ?")
    if lease:
        sets.append("lease_owner = ?, lease_expires_at = ?, heartbeat_at = ?")
        where.append("(lease_owner IS NULL OR lease_owner IN (?, ?) OR lease_expires_at < ?)")
    return f"UPDATE runs SET {', '.join(sets)} WHERE {' AND '.join(where)}"


class SQLiteRunLog(SQLiteDatabase):
    """``RunLog`` over the runs, frames, steps and snapshots tables of one SQLite file."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, synchronous: str = "NORMAL"):
        super().__init__(path, synchronous=synchronous)
        self._cur = self._conn.cursor()
        """The cursor this log's statements run through (under the lock, each result read
        before the next statement): ``Connection.execute`` makes a new cursor each time,
        several a commit."""
        self._update_sql: dict[tuple[tuple[str, ...], bool, bool], str] = {}
        """The run UPDATE statements by the fields they set, made once each."""
        self._prepare()

    def _prepare(self) -> None:
        """Compile the statements a stretch runs first into the connection's statement cache
        while the store opens, not at a resume, the first to run them on this connection
        (reading the run and its snapshot, committing its opening and first step): compiling
        them costs as much as the rest of reading the run (the run's 20-column SELECT alone
        about 140 k instructions). Each is run with no parameters, which compiles and caches
        it and then refuses to bind; one that does not compile says why when it runs."""
        updates = [self._update_sql.setdefault(k, _update_statement(*k)) for k in _USUAL_UPDATES]
        self._transaction.prepare()
        with self._lock:
            for sql in (_GET_RUN, _GET_SNAPSHOT, _INSERT_FRAMES, _INSERT_STEP, *updates):
                try:
                    self._cur.execute(sql)
                except sqlite3.Error:
                    pass

    # -- runs -----------------------------------------------------------------------------

    def create_run(
        self, run: RunRecord, frames: Sequence[Frame] = (), *, step: StepRecord | None = None
    ) -> None:
        with self._tx():
            conn = self._cur
            try:
                conn.execute(
                    f"INSERT INTO runs ({RUN_COLUMNS}) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    run_row(run, text_times=True),
                )
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"run '{run.id}' already exists") from exc
            if frames:
                self._insert_frames(conn, run.id, frames)
                self._update_run(conn, run.id, {}, frames)
            if step is not None:
                self._insert_step(conn, run.id, step)
        run.last_seq = frames[-1].seq if frames else 0

    def get_run(self, run_id: str) -> RunRecord:
        with self._read():
            row = self._cur.execute(_GET_RUN, (run_id,)).fetchone()
        if row is None:
            raise RunNotFoundError(run_id)
        return run_from_row(row)

    def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        parent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[RunRecord]:
        where, params = run_filter("?", status, parent_id, session_id)
        with self._read():
            rows = self._cur.execute(
                f"SELECT {RUN_COLUMNS} FROM runs {where} "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
        return [run_from_row(r) for r in rows]

    # -- the step transaction -------------------------------------------------------------

    def commit(
        self,
        run_id: str,
        frames: Sequence[Frame],
        *,
        step: StepRecord | None = None,
        snapshot: Snapshot | None = None,
        run_fields: dict[str, Any] | None = None,
        lease: Lease | None = None,
        repeatable: bool = False,
    ) -> None:
        if repeatable and step is None and snapshot is None and self.synchronous in _SYNCED:
            # the write-ahead log is written in order: the next commit's sync makes this one
            # durable too, and a power loss before it loses this one, never a later commit
            with self._lock:
                self._cur.execute("PRAGMA synchronous=NORMAL")
                try:
                    self._commit_rows(run_id, frames, step, snapshot, run_fields, lease)
                finally:
                    self._cur.execute(f"PRAGMA synchronous={self.synchronous}")
            return
        self._commit_rows(run_id, frames, step, snapshot, run_fields, lease)

    def _commit_rows(
        self,
        run_id: str,
        frames: Sequence[Frame],
        step: StepRecord | None,
        snapshot: Snapshot | None,
        run_fields: dict[str, Any] | None,
        lease: Lease | None,
    ) -> None:
        with self._tx():
            conn = self._cur
            if frames:
                self._insert_frames(conn, run_id, frames)
            if step is not None:
                self._insert_step(conn, run_id, step)
            if snapshot is not None:
                state = dumps(snapshot.state)
                conn.execute(
                    "INSERT OR REPLACE INTO snapshots(run_id, step, seq, state, checksum) "
                    "VALUES (?,?,?,?,?)",
                    (run_id, snapshot.step, snapshot.seq, state, checksum(state)),
                )
            if frames or run_fields or lease is not None:
                self._update_run(conn, run_id, run_fields or {}, frames, lease)

    def _insert_step(self, conn: sqlite3.Cursor, run_id: str, step: StepRecord) -> None:
        delta = dumps(step.delta)
        conn.execute(_INSERT_STEP, (run_id, step.step, step.seq, delta, checksum(delta)))

    def renew_lease(self, run_id: str, lease: Lease) -> bool:
        now = time.time()
        owner, expires = (None, None) if lease.release else (lease.owner, now + lease.ttl_s)
        with self._tx():
            conn = self._cur
            cur = conn.execute(
                "UPDATE runs SET lease_owner = ?, lease_expires_at = ?, heartbeat_at = ? "
                "WHERE id = ? AND lease_owner = ?",
                (owner, expires, now, run_id, lease.owner),
            )
        return cur.rowcount == 1

    def _insert_frames(self, conn: sqlite3.Cursor, run_id: str, frames: Sequence[Frame]) -> None:
        first = frames[0].seq
        for offset, frame in enumerate(frames):
            if frame.seq != first + offset or frame.run_id != run_id:
                self._discontinuity(conn, run_id, frame.seq, offset)
        try:
            conn.executemany(
                _INSERT_FRAMES, [(run_id, f.seq, f.type, frame_body_json(f)) for f in frames]
            )
        except sqlite3.IntegrityError:
            self._discontinuity(conn, run_id, first, 0)

    def _discontinuity(self, conn: sqlite3.Cursor, run_id: str, seq: int, offset: int) -> NoReturn:
        row = conn.execute("SELECT last_seq FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFoundError(run_id)
        raise WriteConflictError(
            f"run '{run_id}': frame seq {seq} does not continue the log "
            f"(expected {row[0] + 1 + offset}); another writer may be running this run"
        )

    def _update_run(
        self,
        conn: sqlite3.Cursor,
        run_id: str,
        fields: dict[str, Any],
        frames: Sequence[Frame] = (),
        lease: Lease | None = None,
    ) -> None:
        """One UPDATE for the run's fields, its log position and its lease. With frames it only
        matches while the log still ends just before them, with a lease only while no other
        live writer holds the run (so a concurrent writer is caught either way)."""
        key = (tuple(fields), bool(frames), lease is not None)
        sql = self._update_sql.get(key)
        if sql is None:
            sql = self._update_sql[key] = _update_statement(*key)
        params: list[Any] = []
        if fields:
            params.append(utc_now().isoformat())
            for name, value in fields.items():
                if isinstance(value, RunStatus):
                    value = value.value
                elif name in JSON_RUN_FIELDS and value is not None:
                    value = dumps(value)
                params.append(value)
        if frames:
            params.append(frames[-1].seq)
        if lease is not None:
            now = time.time()
            if lease.release:
                params += [None, None, now]
            else:
                params += [lease.owner, now + lease.ttl_s, now]
        params.append(run_id)
        if frames:
            params.append(frames[0].seq - 1)
        if lease is not None:
            params += [lease.owner, lease.takeover or lease.owner, now]
        cur = conn.execute(sql, params)
        if cur.rowcount == 1:
            return
        if lease is not None:
            row = conn.execute(
                "SELECT lease_owner, lease_expires_at FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            holder, expires = row if row is not None else (None, None)
            if holder is not None and holder not in (lease.owner, lease.takeover):
                if expires is not None and lease_is_live(holder, expires):
                    raise RunLeasedError(run_id, holder, float(expires))
                # a holder that is gone (its process ended on this host): replace it
                retry = Lease(
                    owner=lease.owner, ttl_s=lease.ttl_s, takeover=holder, release=lease.release
                )
                self._update_run(conn, run_id, fields, frames, retry)
                return
        self._discontinuity(conn, run_id, frames[0].seq if frames else 0, 0)

    # -- reading the record ---------------------------------------------------------------

    def read_frames(
        self, run_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[Frame]:
        with self._read():
            rows = self._cur.execute(
                "SELECT seq, type, CAST(data AS BLOB) FROM frames WHERE run_id = ? AND seq > ? "
                "ORDER BY seq LIMIT ?",
                # no seq passes a signed 64-bit integer, which is all SQLite can compare with
                (run_id, min(after_seq, 2**63 - 1), -1 if limit is None else limit),
            ).fetchall()
        return decode_frames(run_id, rows)

    def read_steps(
        self, run_id: str, *, after_step: int = 0, limit: int | None = None
    ) -> list[StepRecord]:
        with self._read():
            rows = self._cur.execute(
                "SELECT step, seq, CAST(delta AS BLOB), checksum FROM steps "
                "WHERE run_id = ? AND step > ? ORDER BY step LIMIT ?",
                (run_id, after_step, -1 if limit is None else limit),
            ).fetchall()
        return decode_steps(run_id, rows)

    def get_run_with_snapshot(self, run_id: str) -> tuple[RunRecord, Snapshot | None]:
        with self._lock:  # one moment: no commit between the two reads
            run = self.get_run(run_id)
            try:
                return run, self._snapshot(run_id, lazy=True)
            except StateCorruptionError:
                return run, None

    def latest_snapshot(self, run_id: str) -> Snapshot | None:
        return self._snapshot(run_id, lazy=False)

    def _snapshot(self, run_id: str, *, lazy: bool) -> Snapshot | None:
        with self._read():
            row = self._cur.execute(_GET_SNAPSHOT, (run_id,)).fetchone()
        return decode_snapshot(run_id, row, lazy=lazy)

    def fork_run(self, source_id: str, new_run: RunRecord, *, upto_seq: int) -> None:
        source = self.get_run(source_id)
        if upto_seq < 0 or upto_seq > source.last_seq:
            raise InvalidRunStateError(
                f"run '{source_id}' has frames 1..{source.last_seq}; cannot fork at seq {upto_seq}"
            )
        self.create_run(new_run)
        with self._tx():
            conn = self._cur
            conn.execute(
                "INSERT INTO frames(run_id, seq, type, data) "
                "SELECT ?, seq, type, data FROM frames WHERE run_id = ? AND seq <= ?",
                (new_run.id, source_id, upto_seq),
            )
            conn.execute(
                "INSERT INTO steps(run_id, step, seq, delta, checksum) "
                "SELECT ?, step, seq, delta, checksum FROM steps WHERE run_id = ? AND seq <= ?",
                (new_run.id, source_id, upto_seq),
            )
            conn.execute("UPDATE runs SET last_seq = ? WHERE id = ?", (upto_seq, new_run.id))
        new_run.last_seq = upto_seq

    def run_ids_with_prefix(self, prefix: str, *, limit: int = 10) -> list[str]:
        with self._lock:
            rows = self._cur.execute(
                "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
                (len(prefix), prefix, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def delete_runs(self, run_ids: Iterable[str]) -> None:
        ids = [(run_id,) for run_id in run_ids]
        with self._tx():
            conn = self._cur
            for table, column in (
                ("frames", "run_id"),
                ("steps", "run_id"),
                ("snapshots", "run_id"),
                ("runs", "id"),
            ):
                conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", ids)
