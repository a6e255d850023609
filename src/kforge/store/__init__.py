"""The record: runs, frames, step deltas, snapshots and documents."""

from __future__ import annotations

from kforge.store.base import TERMINAL_STATUSES, RunRecord, RunStatus, Snapshot, StepRecord, Store
from kforge.store.memory import MemoryStore
from kforge.store.postgres import PostgresStore
from kforge.store.sqlite import SQLiteStore, default_db_path

__all__ = [
    "TERMINAL_STATUSES",
    "MemoryStore",
    "PostgresStore",
    "RunRecord",
    "RunStatus",
    "SQLiteStore",
    "Snapshot",
    "StepRecord",
    "Store",
    "default_db_path",
]
