"""The SQLite store's write transaction and read hold, as plain objects rather than generators:
every step commits twice and a tree's steps also read, and a generator-based context manager
costs several times as much."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from kforge.errors import StoreError

__all__ = ["Reading", "Transaction"]


class Reading:
    """``with reading as conn``: holds the lock for reads; SQLite's own errors (other than a
    constraint's) leave as a StoreError whose text, from ``damaged``, says what to do."""

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
        return self._conn

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        self._lock.release()
        if exc is not None:
            self._raise_damaged(exc)

    def _raise_damaged(self, exc: BaseException) -> None:
        """A StoreError for SQLite's own errors; a constraint's stays what it is."""
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError):
            raise StoreError(self._damaged(exc)) from exc


class Transaction(Reading):
    """``with transaction as conn``: holds the lock, begins, then commits or rolls back; a
    database error (other than a constraint's) leaves as a StoreError whose text, from
    ``damaged``, says what to do. It keeps no state between uses, so one serves every
    transaction on its connection. ``BEGIN`` and ``COMMIT`` go through one cursor of its own
    (a connection's ``execute`` makes a new cursor each time, twice a commit)."""

    __slots__ = ("_cursor",)

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.RLock,
        damaged: Callable[[Exception], str],
    ) -> None:
        super().__init__(conn, lock, damaged)
        self._cursor = conn.cursor()

    def prepare(self) -> None:
        """Compile ``BEGIN IMMEDIATE``, ``COMMIT`` and ``ROLLBACK`` into the connection's
        statement cache without taking a lock or writing: inside a deferred ``BEGIN`` (which
        locks nothing until something is read) the first refuses to run, ``COMMIT`` ends it,
        and ``ROLLBACK`` then refuses to run too; each stays compiled for every transaction."""
        cursor = self._cursor
        with self._lock:
            cursor.execute("BEGIN")
            for sql in ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"):
                try:
                    cursor.execute(sql)
                except sqlite3.OperationalError:
                    pass

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            self._cursor.execute("BEGIN IMMEDIATE")
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
                self._cursor.execute("COMMIT")
                return
            if conn.in_transaction:
                self._cursor.execute("ROLLBACK")
            if exc is not None:
                self._raise_damaged(exc)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as error:
            raise StoreError(self._damaged(error)) from error
        finally:
            self._lock.release()
