"""Capabilities the runtime hands to agents through ``RunContext.services``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kforge.store.base import Store

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus

__all__ = ["Corpora"]


class Corpora:
    """Opens document corpora kept in the run store, once per process."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._open: dict[str, Corpus] = {}

    def open(self, name: str) -> Corpus:
        corpus = self._open.get(name)
        if corpus is None:
            from kforge.rag.corpus import Corpus

            corpus = Corpus.open(self._store, name)
            self._open[name] = corpus
        return corpus

    def forget(self, name: str) -> None:
        """Drop a cached corpus so the next ``open`` reloads it (after an ingest elsewhere)."""
        self._open.pop(name, None)
