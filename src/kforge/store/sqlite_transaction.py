"""The SQLite store's write transaction, as a plain object rather than a generator: every step
commits through it twice, and a generator-based context manager costs several times as much."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from kforge.errors import StoreError

__all__ = ["Transaction"]


class Transaction:
    """``with transaction as conn``: holds the lock, begins, then commits or rolls back; a
    database error (other than a constraint's) leaves as a StoreError whose text, from
    ``damaged``, says what to do. It keeps no state between uses, so one serves every
    transaction on its connection."""

    __slots__ = ("_conn", "_damaged", "_lock")

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.RLock,
        damaged: Callable[[Exception], str],
    ) -> None:
        self._conn = conn
        self._lock = lock
        self._damaged = damaged

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            self._lock.release()
            self._raise_damaged(exc)
            raise
        return self._conn

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        conn = self._conn
        try:
            if kind is None:
                conn.execute("COMMIT")
                return
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if exc is not None:
                self._raise_damaged(exc)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as error:
            raise StoreError(self._damaged(error)) from error
        finally:
            self._lock.release()

    def _raise_damaged(self, exc: BaseException) -> None:
        """A StoreError for SQLite's own errors; a constraint's stays what it is."""
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError):
            raise StoreError(self._damaged(exc)) from exc
