"""The PostgreSQL run log: the record shared by processes on many machines, one round trip per
step.

Each step commits through the server-side function ``kforge_commit`` (see ``postgres_schema``),
which also notifies listeners on the ``kforge_frames`` channel, so live events cross processes.
Frame bodies and step deltas are stored packed (``kforge.store.packing``: deflate with a preset
dictionary, about a third of their JSON); snapshots stay JSON text, which PostgreSQL compresses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
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
from kforge.store.base import UPDATABLE_RUN_FIELDS, RunRecord, RunStatus, Snapshot, StepRecord
from kforge.store.lease import Lease, lease_is_live
from kforge.store.packing import pack
from kforge.store.postgres_database import PostgresDatabase
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

__all__ = ["PostgresRunLog"]

_READ_FRAMES = (
    "SELECT seq, type, data FROM frames WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s"
)
_READ_STEPS = (
    "SELECT step, seq, delta, checksum FROM steps "
    "WHERE run_id = %s AND step > %s ORDER BY step LIMIT %s"
)


def _field_value(key: str, value: Any) -> Any:
    if isinstance(value, RunStatus):
        return value.value
    if key in JSON_RUN_FIELDS and value is not None:
        return dumps(value)
    return value


_WARM = """
DO $warm$
DECLARE
    r text := 'kforge-warm-' || md5(random()::text || clock_timestamp()::text);
BEGIN
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', false);
    PERFORM set_config('synchronous_commit', 'off', true);
    {prepare}
    BEGIN
        INSERT INTO runs(id, agent_type, status, created_at, updated_at, input)
            VALUES (r, 'warm', 'running', now(), now(), '{}');
        EXECUTE format($c$EXECUTE kforge_commit_1(%L, ARRAY[1], ARRAY['warm'],
            ARRAY['{}'::bytea], 1, 1, '[]'::bytea, 0, 1, 1, '{"iteration": 1}', 0,
            '{"iteration": 1}', now(), 'warm', NULL, 30.0, false,
            extract(epoch FROM clock_timestamp()))$c$, r);
        EXECUTE format($c$EXECUTE kforge_commit_lazy_1(%L, ARRAY[2], ARRAY['warm'],
            ARRAY['{}'::bytea], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            '{"status": "running"}', now(), NULL, NULL, NULL, false,
            extract(epoch FROM clock_timestamp()))$c$, r);
        EXECUTE format('EXECUTE kforge_run_1(%L)', r);
        PERFORM seq, type, data FROM frames WHERE run_id = r AND seq > 0 ORDER BY seq;
        PERFORM step, seq, delta, checksum FROM steps WHERE run_id = r AND step > 0 ORDER BY step;
        PERFORM key, value FROM docs WHERE namespace = r ORDER BY key;
        RAISE SQLSTATE 'KFWRM';
    EXCEPTION WHEN SQLSTATE 'KFWRM' THEN
        NULL;
    END;
END
$warm$
"""


def _warm(conn: Any) -> None:
    """Have a new connection's server process prepare the statements of a step's commit
    (``postgres_commit``) and of a resume's read (``postgres_run_read``), plan them and every
    statement in the step function once for every later use (``plan_cache_mode`` set to
    ``force_generic_plan`` for the session: else the server plans each again at each of their
    first five uses), and read the tables of a resume, so that the first steps through it
    (those of a resumed run) do not pay for that: a throwaway run gets frames, a step, a
    snapshot and a lease, all undone. One statement, queued in the pipeline the caller has open
    (no round trip of its own), whose transaction does not wait for the disk (it leaves nothing
    to keep). Every statement on this connection is kforge's own and looks rows up by key, so
    one plan for all parameters is what the server would settle on anyway."""
    from kforge.store.postgres_commit import mark_prepared, prepare_if_missing
    from kforge.store.postgres_run_read import RUN_READ, RUN_READ_NAME, RUN_READ_TYPES

    read = [(RUN_READ_NAME, RUN_READ_TYPES, RUN_READ)]
    conn.execute(_WARM.replace("{prepare}", prepare_if_missing(read)))
    mark_prepared(conn, [RUN_READ_NAME])


class PostgresRunLog(PostgresDatabase):
    """``RunLog`` over the runs, frames, steps and snapshots tables of a PostgreSQL database.

    ``url`` is a libpq connection URL (``postgresql://user@host:port/db``). At most
    ``pool_size`` connections, two when that is one (``PostgresDatabase``); the schema
    migrates itself on open. ``warm`` has each new connection run the statements of a step and
    of a resume once first (``_warm``): a few milliseconds of the server's time a connection,
    paid back in a server or worker that resumes many runs, not in a command that runs once.
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        connect_timeout_s: float = 10.0,
        warm: bool = True,
    ):
        super().__init__(
            url,
            pool_size=pool_size,
            connect_timeout_s=connect_timeout_s,
            warm=_warm if warm else None,
        )
        from kforge.store.postgres_commit import commit_values, send_commit
        from kforge.store.postgres_run_read import read_run_row

        self._commit_values = commit_values
        self._send_commit = send_commit
        self._read_run_row = read_run_row

    def listen(self, on_notice: Callable[[str | None, int], None]) -> Callable[[], None]:
        """Call ``on_notice(run_id, last_seq)`` (from a thread) for every commit any process
        makes, from now until the returned function is called; ``(None, 0)`` after a lost
        connection came back (look again at everything)."""
        from kforge.store.postgres_events import CommitNotices

        notices = CommitNotices(self.url, on_notice)
        notices.start()
        return notices.stop

    # -- runs -----------------------------------------------------------------------------

    def create_run(
        self, run: RunRecord, frames: Sequence[Frame] = (), *, step: StepRecord | None = None
    ) -> None:
        psycopg = self._psycopg
        with self._conn() as conn, conn.transaction():
            try:
                conn.execute(
                    f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({', '.join(['%s'] * 20)})",
                    run_row(run),
                )
            except psycopg.errors.UniqueViolation as exc:
                raise StoreError(f"run '{run.id}' already exists") from exc
            if frames or step is not None:
                self._commit_on(conn, run.id, frames, step, None, None, None)
        run.last_seq = frames[-1].seq if frames else 0

    def get_run(self, run_id: str) -> RunRecord:
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE id = %s", (run_id,)
            ).fetchone()
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
        where, params = run_filter("%s", status, parent_id, session_id)
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {RUN_COLUMNS} FROM runs {where} "
                "ORDER BY created_at DESC, ord DESC LIMIT %s",
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
        if run_fields and set(run_fields) - UPDATABLE_RUN_FIELDS:
            raise StoreError(
                f"cannot update run fields {sorted(set(run_fields) - UPDATABLE_RUN_FIELDS)}"
            )
        # a step or a snapshot is never repeatable work: those wait for the disk (run fields
        # may go with a repeatable commit: a stretch's opening nobody waits to see durable)
        lazy = repeatable and step is None and snapshot is None
        with self._conn() as conn:
            self._commit_on(conn, run_id, frames, step, snapshot, run_fields, lease, lazy=lazy)

    def _commit_on(
        self,
        conn: Any,
        run_id: str,
        frames: Sequence[Frame],
        step: StepRecord | None,
        snapshot: Snapshot | None,
        run_fields: dict[str, Any] | None,
        lease: Lease | None,
        *,
        lazy: bool = False,
    ) -> None:
        if frames:
            first = frames[0].seq
            for offset, frame in enumerate(frames):
                if frame.seq != first + offset or frame.run_id != run_id:
                    self._discontinuity(conn, run_id, frame.seq, offset)
        delta = dumps(step.delta) if step is not None else None
        state = dumps(snapshot.state) if snapshot is not None else None
        fields = {k: _field_value(k, v) for k, v in (run_fields or {}).items()}
        values = self._commit_values(
            run_id,
            [f.seq for f in frames],
            [f.type for f in frames],
            [pack(frame_body_json(f)) for f in frames],
            (step.step, step.seq, pack(delta), checksum(delta))
            if step is not None and delta is not None
            else None,
            (snapshot.step, snapshot.seq, state, checksum(state))
            if snapshot is not None and state is not None
            else None,
            dumps(fields),
            utc_now() if fields else None,
            (lease.owner, lease.takeover, lease.ttl_s, lease.release)
            if lease is not None
            else None,
            time.time(),
        )
        try:
            outcome, _, holder, expires = self._send_commit(conn, values, lazy=lazy)
        except self._psycopg.errors.UniqueViolation:
            self._discontinuity(conn, run_id, frames[0].seq if frames else 0, 0)
        if outcome == "ok":
            return
        if outcome == "missing":
            raise RunNotFoundError(run_id)
        if outcome == "leased" and lease is not None and holder is not None:
            if expires is not None and lease_is_live(holder, expires):
                raise RunLeasedError(run_id, holder, float(expires))
            # a holder that is gone (its process ended on this host): replace it
            retry = Lease(
                owner=lease.owner, ttl_s=lease.ttl_s, takeover=holder, release=lease.release
            )
            self._commit_on(conn, run_id, frames, step, snapshot, run_fields, retry, lazy=lazy)
            return
        self._discontinuity(conn, run_id, frames[0].seq if frames else 0, 0)

    def _discontinuity(self, conn: Any, run_id: str, seq: int, offset: int) -> NoReturn:
        row = conn.execute("SELECT last_seq FROM runs WHERE id = %s", (run_id,)).fetchone()
        if row is None:
            raise RunNotFoundError(run_id)
        raise WriteConflictError(
            f"run '{run_id}': frame seq {seq} does not continue the log "
            f"(expected {row[0] + 1 + offset}); another writer may be running this run"
        )

    def renew_lease(self, run_id: str, lease: Lease) -> bool:
        now = time.time()
        owner, expires = (None, None) if lease.release else (lease.owner, now + lease.ttl_s)
        with self._conn() as conn:
            cur = conn.execute(
                "UPDATE runs SET lease_owner = %s, lease_expires_at = %s, heartbeat_at = %s "
                "WHERE id = %s AND lease_owner = %s",
                (owner, expires, now, run_id, lease.owner),
            )
            return bool(cur.rowcount == 1)

    # -- reading the record ---------------------------------------------------------------

    def read_frames(
        self, run_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[Frame]:
        with self._conn() as conn:
            # no seq passes a bigint, and PostgreSQL refuses to compare one with a larger number
            rows = (
                self._cursor(conn)
                .execute(_READ_FRAMES, (run_id, min(after_seq, 2**63 - 1), limit))
                .fetchall()
            )
        return decode_frames(run_id, rows)

    def read_steps(
        self, run_id: str, *, after_step: int = 0, limit: int | None = None
    ) -> list[StepRecord]:
        with self._conn() as conn:
            rows = self._cursor(conn).execute(_READ_STEPS, (run_id, after_step, limit)).fetchall()
        return decode_steps(run_id, rows)

    def get_run_with_snapshot(self, run_id: str) -> tuple[RunRecord, Snapshot | None]:
        with self._conn() as conn:
            row = self._read_run_row(conn, run_id)
        if row is None:
            raise RunNotFoundError(run_id)
        run = run_from_row(row[:-4])
        if row[-4] is None:
            return run, None
        try:
            return run, decode_snapshot(run_id, row[-4:], lazy=True)
        except StateCorruptionError:
            return run, None

    def latest_snapshot(self, run_id: str) -> Snapshot | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT step, seq, state, checksum FROM snapshots WHERE run_id = %s", (run_id,)
            ).fetchone()
        return decode_snapshot(run_id, row)

    def fork_run(self, source_id: str, new_run: RunRecord, *, upto_seq: int) -> None:
        source = self.get_run(source_id)
        if upto_seq < 0 or upto_seq > source.last_seq:
            raise InvalidRunStateError(
                f"run '{source_id}' has frames 1..{source.last_seq}; cannot fork at seq {upto_seq}"
            )
        self.create_run(new_run)
        with self._conn() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO frames(run_id, seq, type, data) "
                "SELECT %s, seq, type, data FROM frames WHERE run_id = %s AND seq <= %s",
                (new_run.id, source_id, upto_seq),
            )
            conn.execute(
                "INSERT INTO steps(run_id, step, seq, delta, checksum) "
                "SELECT %s, step, seq, delta, checksum FROM steps WHERE run_id = %s AND seq <= %s",
                (new_run.id, source_id, upto_seq),
            )
            conn.execute("UPDATE runs SET last_seq = %s WHERE id = %s", (upto_seq, new_run.id))
        new_run.last_seq = upto_seq

    def run_ids_with_prefix(self, prefix: str, *, limit: int = 10) -> list[str]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT id FROM runs WHERE left(id, %s) = %s ORDER BY id LIMIT %s",
                (len(prefix), prefix, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def delete_runs(self, run_ids: Iterable[str]) -> None:
        ids = list(run_ids)
        with self._conn() as conn, conn.transaction():
            for table, column in (
                ("frames", "run_id"),
                ("steps", "run_id"),
                ("snapshots", "run_id"),
                ("runs", "id"),
            ):
                conn.execute(f"DELETE FROM {table} WHERE {column} = ANY(%s)", (ids,))
