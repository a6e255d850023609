"""The PostgreSQL store, shared by processes on many machines: the run log and the passage
store of one database, each on a pool of its own."""

from __future__ import annotations

from kforge.store.combined import PassagesBeside
from kforge.store.postgres_database import is_postgres_url, redact_url
from kforge.store.postgres_passages import PostgresPassageStore
from kforge.store.postgres_runs import PostgresRunLog

__all__ = ["PostgresStore", "is_postgres_url", "redact_url"]


class PostgresStore(PassagesBeside, PostgresRunLog):
    """Runs, frames, step deltas, snapshots, documents and passage indexes in a PostgreSQL
    database (``url``, a libpq connection URL). ``pool_size`` bounds the run log's pool and
    ``warm`` prepares its connections for steps and resumes (``PostgresRunLog``); the passage
    store's pool grows up to ``pool_size`` too, from one connection."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        connect_timeout_s: float = 10.0,
        warm: bool = True,
    ):
        super().__init__(url, pool_size=pool_size, connect_timeout_s=connect_timeout_s, warm=warm)
        try:
            # the run log has just migrated this database and reached it
            self.passages = PostgresPassageStore(
                url, pool_size=pool_size, connect_timeout_s=connect_timeout_s, beside=True
            )
        except BaseException:
            super().close()
            raise

    def close(self) -> None:
        self.passages.close()
        super().close()
