"""One connection to a kforge SQLite file, as the SQLite run log and passage store each hold
their own: WAL mode, the schema migrated on open, errors that say how to recover, and the
documents table (``DocumentStore``) both of them keep."""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kforge.errors import StoreError
from kforge.frames import utc_now
from kforge.jsoncodec import dumps
from kforge.store.documents import read_docs
from kforge.store.migrations import apply_migrations
from kforge.store.sqlite_transaction import Reading, Transaction

__all__ = ["SQLiteDatabase", "damage_text", "default_db_path"]


def default_db_path() -> Path:
    """``KFORGE_DB`` if set, else ``kforge.db`` in the user's data directory."""
    env = os.environ.get("KFORGE_DB")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("kforge", appauthor=False)) / "kforge.db"


def _recovery(path: Path) -> str:
    return (
        f"copy out what is readable with the sqlite3 tool (`sqlite3 {path} .recover > "
        "recovered.sql`), then restore a backup or start a new database with --db"
    )


_UNDECODABLE = re.compile(r"Could not decode to UTF-8 column '([^']*)' with text .*", re.S)


def damage_text(exc: BaseException) -> str:
    """SQLite's own words on a damaged file, without the damaged bytes it quotes."""
    text = str(exc)
    undecodable = _UNDECODABLE.match(text)
    if undecodable:
        return f"a value in column '{undecodable.group(1)}' is not readable text"
    return text


def _wal_in_use(path: Path) -> bool:
    """True when the database's write-ahead log already holds frames (another connection is
    writing through it, so no new log is started)."""
    try:
        return os.path.getsize(f"{path}-wal") > 32  # a log's header alone is 32 bytes
    except OSError:
        return False


class SQLiteDatabase:
    """A connection to ``path`` (``KFORGE_DB`` or the user's data directory when None).

    ``synchronous="NORMAL"`` (the default) survives a killed process; ``"FULL"`` also survives
    power loss at the cost of an fsync per commit.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, synchronous: str = "NORMAL"):
        self.path = Path(path) if path is not None else default_db_path()
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=30.0
            )
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA journal_mode=WAL")
            if synchronous.upper() not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
                raise StoreError(f"synchronous must be NORMAL or FULL (got {synchronous!r})")
            self._conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
            self.synchronous = synchronous.upper()
            """The connection's synchronous level (what every commit waits for)."""
            self._conn.execute("PRAGMA foreign_keys=ON")
            apply_migrations(self._conn)
            if str(self.path) != ":memory:" and not _wal_in_use(self.path):
                # The first write to a new write-ahead log also syncs its header (about
                # 0.4 ms); rewriting the header's own user_version takes that now, so the first
                # step committed through this store (a resumed run's, say) does not wait for it.
                version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
                self._conn.execute(f"PRAGMA user_version = {version}")
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open database {self.path}: {exc}; if it is a damaged kforge database, "
                + _recovery(self.path)
            ) from exc
        self._lock = threading.RLock()
        self._transaction = Transaction(self._conn, self._lock, self._damaged)
        self._reading = Reading(self._conn, self._lock, self._damaged)

    def _tx(self) -> Transaction:
        """A write transaction (a plain object, not a generator: it runs twice per step)."""
        return self._transaction

    def _read(self) -> Reading:
        """Hold the connection; SQLite's own errors leave as StoreError saying what to do."""
        return self._reading

    def _damaged(self, exc: Exception) -> str:
        text = damage_text(exc)
        if "locked" in text or "busy" in text:
            return f"database {self.path} is busy ({text}); try again when the other writer is done"
        return f"database {self.path} is damaged ({text}); " + _recovery(self.path)

    # -- documents ------------------------------------------------------------------------

    def put_docs(self, namespace: str, docs: dict[str, dict[str, Any]]) -> None:
        now = utc_now().isoformat()
        with self._tx() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO docs(namespace, key, value, updated_at) VALUES (?,?,?,?)",
                [(namespace, k, dumps(v), now) for k, v in docs.items()],
            )

    def get_docs(
        self, namespace: str, keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        with self._read():
            if keys is None:
                rows = self._conn.execute(
                    "SELECT key, value FROM docs WHERE namespace = ? ORDER BY key", (namespace,)
                ).fetchall()
            else:
                wanted = list(keys)
                rows = []
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows.extend(
                        self._conn.execute(
                            f"SELECT key, value FROM docs WHERE namespace = ? AND key IN ({marks})",
                            (namespace, *chunk),
                        ).fetchall()
                    )
        return read_docs(namespace, rows)

    def delete_docs(self, namespace: str, keys: Iterable[str] | None = None) -> None:
        with self._tx() as conn:
            if keys is None:
                conn.execute("DELETE FROM docs WHERE namespace = ?", (namespace,))
            else:
                conn.executemany(
                    "DELETE FROM docs WHERE namespace = ? AND key = ?",
                    [(namespace, k) for k in keys],
                )

    def close(self) -> None:
        with self._lock:
            self._conn.close()
