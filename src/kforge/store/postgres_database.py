"""Connections to a kforge PostgreSQL database, as the PostgreSQL run log and passage store
each hold their own (one made on open, a pool for uses that overlap it): the schema checked
(and migrated when it must be) on open, the driver's errors turned into ones that say what to
do, and the documents table (``DocumentStore``) both keep."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from kforge.errors import StoreError
from kforge.extras import require_extra
from kforge.frames import utc_now
from kforge.jsoncodec import dumps
from kforge.store.documents import read_docs
from kforge.store.postgres_schema import (
    VERSIONS_IN_FORCE,
    apply_migrations,
    is_current,
    versions_of,
)

__all__ = ["READ_DOCS", "PostgresDatabase", "is_postgres_url", "redact_url"]

_URL = re.compile(r"^postgres(ql)?://", re.IGNORECASE)


def is_postgres_url(target: object) -> bool:
    """Whether ``target`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(target, str) and bool(_URL.match(target))


def redact_url(url: str) -> str:
    """The URL with its password hidden, for messages."""
    return re.sub(r"(://[^:/@]+:)[^@/]*@", r"\1***@", url)


def _reason(exc: BaseException) -> str:
    """The driver's message on one line."""
    return " ".join(str(exc).split())


READ_DOCS = "SELECT key, value FROM docs WHERE namespace = %s ORDER BY key"

_PREPARE_THRESHOLD = 2
"""Executions of a statement on a connection before it is prepared there."""


class PostgresDatabase:
    """Connections to ``url`` (``postgresql://user@host:port/db``); ``warm`` prepares each new
    one. One connection is made on open and serves every use while it is free, so a
    process that does one thing at a time opens one connection and starts no thread; uses that
    overlap it take connections from a pool made at the first overlap, of at most
    ``pool_size - 1`` (at least one) more."""

    passage_tables = False
    """Whether this store uses the passage store's tables, which its open makes when the
    database has none yet (``apply_migrations``)."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        connect_timeout_s: float = 10.0,
        warm: Callable[[Any], None] | None = None,
        beside: bool = False,
    ):
        """``warm`` queues statements a new connection runs once before its first use, in
        pipeline mode (so in one round trip; on open, the one that checks the schema), each
        run by the server in the schema brought up to date. ``beside``: opened next to a store
        of the same database that has just brought its schema up to date, so that is not
        checked again (but for the passage store's tables, which a store that uses them makes
        at its first open on a database)."""
        require_extra("postgres", "the PostgreSQL store")
        import psycopg

        self.url = url
        self._psycopg = psycopg
        self._warm = warm
        self._pool_size = max(1, pool_size)
        self._connect_timeout_s = connect_timeout_s
        self._pool: Any = None
        self._pool_lock = threading.Lock()
        self._first_lock = threading.Lock()
        self._closed = False
        # a direct connection, not the pool's: a wrong URL or a server that is down is an
        # error at once, where a pool would keep trying in the background until its timeout
        self._first: Any = self._connect(migrate=not beside or self.passage_tables)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact_url(self.url)!r})"

    def _connect(self, *, migrate: bool = False) -> Any:
        """A new connection, the schema brought up to date first when ``migrate``."""
        psycopg = self._psycopg
        try:
            conn = psycopg.connect(
                self.url,
                autocommit=True,
                prepare_threshold=_PREPARE_THRESHOLD,
                connect_timeout=max(1, int(self._connect_timeout_s)),
            )
        except psycopg.Error as exc:
            raise self._cannot_open(exc) from exc
        try:
            if migrate:
                self._open_schema(conn)
            else:
                self._warm_connection(conn)
        except psycopg.Error as exc:
            conn.close()
            raise self._cannot_open(exc) from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_schema(self, conn: Any) -> None:
        """Check the schema and warm the connection in one round trip, as most opens find the
        schema up to date; else bring it up to date, then warm the connection."""
        passages = self.passage_tables
        if is_current(self._versions_warming(conn), passages=passages):
            return
        apply_migrations(conn, passages=passages)
        self._warm_connection(conn)

    def _versions_warming(self, conn: Any) -> set[int] | None:
        """The migrations the database records, read in the pipeline that warms the
        connection; None when a statement there failed (no schema yet, or one the warm-up
        does not fit: ``apply_migrations`` looks again)."""
        from psycopg.pq import TransactionStatus

        psycopg = self._psycopg
        try:
            with conn.pipeline():
                try:
                    versions = conn.execute(VERSIONS_IN_FORCE)
                    if self._warm is not None:
                        self._warm(conn)
                except psycopg.Error:
                    # the rest of the pipeline is skipped, which leaving it reports (an error
                    # leaving the block would be logged as one that hides another)
                    return None
            return versions_of(versions.fetchone())
        except psycopg.Error:
            return None
        finally:
            if not conn.broken and conn.info.transaction_status != TransactionStatus.IDLE:
                conn.rollback()  # a warm-up statement failed inside its transaction

    def _warm_connection(self, conn: Any) -> None:
        """Run ``warm`` on a new connection, in one round trip."""
        if self._warm is not None:
            with conn.pipeline():
                self._warm(conn)

    def _cannot_open(self, exc: BaseException) -> StoreError:
        return StoreError(
            f"cannot open PostgreSQL database {redact_url(self.url)}: {_reason(exc)}; check "
            "that the server runs and the URL (user, host, port, database) is right "
            "(scripts/postgres start runs a throwaway local server)"
        )

    def _closed_error(self) -> StoreError:
        return StoreError(
            f"the store of PostgreSQL database {redact_url(self.url)} is closed; open it again"
        )

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """A connection to use alone; the driver's errors leave as StoreError saying what to
        do."""
        psycopg = self._psycopg
        try:
            if self._first_lock.acquire(blocking=False):
                try:
                    conn = self._first_connection()
                    try:
                        yield conn
                    finally:
                        self._settle(conn)
                finally:
                    self._first_lock.release()
            else:
                with self._overflow().connection() as conn:
                    yield conn
        except psycopg.errors.UniqueViolation:
            raise
        except psycopg.Error as exc:
            raise StoreError(
                f"PostgreSQL database {redact_url(self.url)} failed: {_reason(exc)}; "
                "check that the server is up, then try again"
            ) from exc

    def _first_connection(self) -> Any:
        """The first connection, made again when the last one was lost (a restarted server)."""
        if self._closed:
            raise self._closed_error()
        if self._first is None or self._first.closed or self._first.broken:
            if self._first is not None:
                self._first.close()
            self._first = None
            self._first = self._connect()
        return self._first

    def _settle(self, conn: Any) -> None:
        """Leave the first connection idle for its next use, as the pool does with its own: a
        transaction left open is rolled back, a connection that cannot be is dropped."""
        from psycopg.pq import TransactionStatus

        status = conn.info.transaction_status
        if status == TransactionStatus.IDLE:
            return
        if status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
            try:
                conn.rollback()
                return
            except self._psycopg.Error:
                pass
        conn.close()
        self._first = None

    @staticmethod
    def _cursor(conn: Any) -> Any:
        """The cursor the connection keeps for the statements of steps and resumes: a cursor
        keeps what it learnt of adapting each parameter's type, which a new one (what
        ``conn.execute`` makes) learns again at every statement. Its result is gone at the
        next statement run through it."""
        cursor = getattr(conn, "_kforge_cursor", None)
        if cursor is None or cursor.closed:
            cursor = conn._kforge_cursor = conn.cursor()
        return cursor

    def _overflow(self) -> Any:
        """The pool for uses that overlap the first connection's, made at the first overlap."""
        with self._pool_lock:
            if self._closed:
                raise self._closed_error()
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=max(1, self._pool_size - 1),
                    kwargs={"autocommit": True, "prepare_threshold": _PREPARE_THRESHOLD},
                    configure=self._warm_connection if self._warm is not None else None,
                    open=True,
                    name="kforge",
                )
            return self._pool

    # -- documents ------------------------------------------------------------------------

    def put_docs(self, namespace: str, docs: dict[str, dict[str, Any]]) -> None:
        if not docs:
            return
        now = utc_now().isoformat()
        keys = list(docs)
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO docs(namespace, key, value, updated_at) "
                "SELECT %s, k, v, %s FROM unnest(%s::text[], %s::text[]) AS u(k, v) "
                "ON CONFLICT (namespace, key) DO UPDATE "
                "SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at",
                (namespace, now, keys, [dumps(docs[k]) for k in keys]),
            )

    def get_docs(
        self, namespace: str, keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        with self._conn() as conn:
            if keys is None:
                rows = conn.execute(READ_DOCS, (namespace,)).fetchall()
            else:
                rows = conn.execute(
                    "SELECT key, value FROM docs WHERE namespace = %s AND key = ANY(%s) "
                    "ORDER BY key",
                    (namespace, list(keys)),
                ).fetchall()
        return read_docs(namespace, rows)

    def delete_docs(self, namespace: str, keys: Iterable[str] | None = None) -> None:
        with self._conn() as conn:
            if keys is None:
                conn.execute("DELETE FROM docs WHERE namespace = %s", (namespace,))
            else:
                conn.execute(
                    "DELETE FROM docs WHERE namespace = %s AND key = ANY(%s)",
                    (namespace, list(keys)),
                )

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        first, self._first = self._first, None
        if first is not None:
            first.close()
