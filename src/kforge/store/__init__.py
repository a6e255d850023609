"""The record: the run log (runs, frames, step deltas, snapshots, leases) and the passage store
(corpora, passages, postings), two protocols each backend implements on its own connection.

Names are imported lazily, so that a module of one half loads nothing of the other.
"""

from __future__ import annotations

from kforge.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "TERMINAL_STATUSES": "kforge.store.base",
    "DocumentStore": "kforge.store.documents",
    "MemoryStore": "kforge.store.memory",
    "PassageStore": "kforge.store.passages",
    "PostgresStore": "kforge.store.postgres",
    "RunLog": "kforge.store.base",
    "RunRecord": "kforge.store.base",
    "RunStatus": "kforge.store.base",
    "SQLiteStore": "kforge.store.sqlite",
    "Snapshot": "kforge.store.base",
    "StepRecord": "kforge.store.base",
    "Store": "kforge.store.combined",
    "default_db_path": "kforge.store.sqlite_database",
    "open_store": "kforge.store.open",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
