"""A pool of connections to a kforge PostgreSQL database, as the PostgreSQL run log and
passage store each hold their own: the schema migrated on open, the driver's errors turned
into ones that say what to do, and the documents table (``DocumentStore``) both keep."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from kforge.errors import StoreError
from kforge.extras import require_extra
from kforge.frames import utc_now
from kforge.jsoncodec import dumps
from kforge.store.documents import read_docs
from kforge.store.postgres_schema import apply_migrations

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


class PostgresDatabase:
    """Connections to ``url`` (``postgresql://user@host:port/db``) from a pool of at most
    ``pool_size``; ``configure`` prepares each new pooled connection."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        connect_timeout_s: float = 10.0,
        configure: Callable[[Any], None] | None = None,
        beside: bool = False,
    ):
        """``beside``: opened next to a store of the same database that has just brought its
        schema up to date and checked that it answers, so neither is done again, and the pool
        makes its first connection in the background rather than before the store opens
        (a new process's first resume never waits for a connection it does not use)."""
        require_extra("postgres", "the PostgreSQL store")
        import psycopg
        from psycopg_pool import ConnectionPool, PoolTimeout

        self.url = url
        self._psycopg = psycopg
        shown = redact_url(url)
        if not beside:
            try:
                with psycopg.connect(
                    url, autocommit=True, connect_timeout=max(1, int(connect_timeout_s))
                ) as conn:
                    apply_migrations(conn)
            except psycopg.Error as exc:
                raise StoreError(
                    f"cannot open PostgreSQL database {shown}: {_reason(exc)}; check that the "
                    "server runs and the URL (user, host, port, database) is right "
                    "(scripts/postgres start runs a throwaway local server)"
                ) from exc
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True, "prepare_threshold": 2},
            configure=configure,
            open=True,
            name="kforge",
        )
        if beside:
            return
        try:
            self._pool.wait(timeout=connect_timeout_s)  # the first use finds one ready
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(
                f"PostgreSQL database {shown} gave no connection within {connect_timeout_s:g} s; "
                "check that the server is up and accepts more connections"
            ) from exc

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact_url(self.url)!r})"

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """A pooled connection; the driver's errors leave as StoreError saying what to do."""
        psycopg = self._psycopg
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.errors.UniqueViolation:
            raise
        except psycopg.Error as exc:
            raise StoreError(
                f"PostgreSQL database {redact_url(self.url)} failed: {_reason(exc)}; "
                "check that the server is up, then try again"
            ) from exc

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
        self._pool.close()
