"""The in-memory store for tests and throwaway runs: its run log with its passage store beside
it, sharing one table of documents (as the SQL stores share one database)."""

from __future__ import annotations

from kforge.store.combined import PassagesBeside
from kforge.store.memory_passages import MemoryPassageStore
from kforge.store.memory_runs import MemoryRunLog

__all__ = ["MemoryStore"]


class MemoryStore(PassagesBeside, MemoryRunLog):
    """Runs, frames, step deltas, snapshots, documents and passage indexes in dictionaries."""

    def __init__(self) -> None:
        super().__init__()
        self.passages = MemoryPassageStore(beside=self)
