"""The SQLite store, the default: one file holding the run log and the passage store, each
on its own connection to it."""

from __future__ import annotations

import os

from kforge.store.combined import PassagesBeside
from kforge.store.sqlite_database import damage_text, default_db_path
from kforge.store.sqlite_passages import SQLitePassageStore
from kforge.store.sqlite_runs import SQLiteRunLog

__all__ = ["SQLiteStore", "damage_text", "default_db_path"]


class SQLiteStore(PassagesBeside, SQLiteRunLog):
    """Runs, frames, step deltas, snapshots, documents and passage indexes in one SQLite file.

    ``synchronous="NORMAL"`` (the default) survives a killed process; ``"FULL"`` also survives
    power loss at the cost of an fsync per commit.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, synchronous: str = "NORMAL"):
        super().__init__(path, synchronous=synchronous)
        self.passages = SQLitePassageStore(self.path, synchronous=synchronous)

    def close(self) -> None:
        self.passages.close()
        super().close()
