"""A run log and a passage store opened together from one ``--db`` (``kforge.store.open``):
each built-in backend's ``...Store`` is its run log with its passage store beside it, each on
its own connection to the same database."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from kforge.store.base import RunLog
from kforge.store.passages import IndexedSource, IndexStatistics, PassageStore

__all__ = ["PassagesBeside", "Store"]


class Store(RunLog, PassageStore, Protocol):
    """Both halves in one object (what ``open_store`` returns). The runtime needs only the
    ``RunLog``, document retrieval only the ``PassageStore``; a store of one's own may be
    either."""


class PassagesBeside:
    """The ``PassageIndex`` of a run log's object, answered by the passage store it was opened
    with (``passages``); the documents are the run log's own (the same table)."""

    passages: PassageStore
    """The passage store opened beside the run log, on its own connection."""

    def put_sources(self, index: str, sources: Sequence[IndexedSource]) -> None:
        self.passages.put_sources(index, sources)

    def delete_sources(self, index: str, keys: Iterable[str] | None = None) -> None:
        self.passages.delete_sources(index, keys)

    def index_sources(self, index: str, keys: Iterable[str] | None = None) -> dict[str, Any]:
        return self.passages.index_sources(index, keys)

    def sources_by_title_word(self, index: str, words: Iterable[str]) -> list[str]:
        return self.passages.sources_by_title_word(index, words)

    def read_passages(self, index: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        return self.passages.read_passages(index, ids)

    def source_passages(self, index: str, key: str | None = None) -> list[dict[str, Any]]:
        return self.passages.source_passages(index, key)

    def index_statistics(self, index: str) -> IndexStatistics:
        return self.passages.index_statistics(index)

    def count_sources(self, index: str) -> int:
        return self.passages.count_sources(index)

    def index_version(self, index: str) -> str:
        return self.passages.index_version(index)

    def document_frequencies(self, index: str, terms: Iterable[str]) -> dict[str, int]:
        return self.passages.document_frequencies(index, terms)

    def search_passages(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> list[tuple[str, float]]:
        return self.passages.search_passages(index, terms, k, k1=k1, b=b)

    def search_versioned(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> tuple[str, list[tuple[str, float]]]:
        return self.passages.search_versioned(index, terms, k, k1=k1, b=b)

    def settle_index(self) -> None:
        self.passages.settle_index()
