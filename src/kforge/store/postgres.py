"""The PostgreSQL store, shared by processes on many machines: the run log and the passage
store of one database, each on connections of its own."""

from __future__ import annotations

import threading

from kforge.store.combined import PassagesBeside
from kforge.store.postgres_database import is_postgres_url, redact_url
from kforge.store.postgres_passages import PostgresPassageStore
from kforge.store.postgres_runs import PostgresRunLog

__all__ = ["PostgresStore", "is_postgres_url", "redact_url"]


class PostgresStore(PassagesBeside, PostgresRunLog):
    """Runs, frames, step deltas, snapshots, documents and passage indexes in a PostgreSQL
    database (``url``, a libpq connection URL). ``pool_size`` bounds the run log's connections
    and ``warm`` prepares them for steps and resumes (``PostgresRunLog``). The passage store
    connects at its first use (runs and resumes never use it), with up to ``pool_size`` of its
    own."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        connect_timeout_s: float = 10.0,
        warm: bool = True,
    ):
        super().__init__(url, pool_size=pool_size, connect_timeout_s=connect_timeout_s, warm=warm)
        self._passages: PostgresPassageStore | None = None
        self._passages_lock = threading.Lock()
        self._pool_size_given = pool_size
        self._connect_timeout_given = connect_timeout_s

    @property
    def passages(self) -> PostgresPassageStore:  # type: ignore[override]  # read, never set
        """The passage store beside the run log, opened at its first use: the run log has
        already migrated this database and reached it."""
        with self._passages_lock:
            if self._passages is None:
                self._passages = PostgresPassageStore(
                    self.url,
                    pool_size=self._pool_size_given,
                    connect_timeout_s=self._connect_timeout_given,
                    beside=True,
                )
            return self._passages

    def close(self) -> None:
        with self._passages_lock:
            passages, self._passages = self._passages, None
        if passages is not None:
            passages.close()
        super().close()
