"""The in-memory passage store: dictionaries searched by the same algorithm as the SQL stores
(``kforge.store.passages.bm25_top``)."""

from __future__ import annotations

import heapq
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kforge.jsoncodec import dumps, loads
from kforge.store.memory_documents import MemoryDocuments
from kforge.store.passages import (
    FLOOR_SAMPLE,
    IndexedSource,
    IndexStatistics,
    add_peaks,
    bm25_top,
)

__all__ = ["MemoryPassageStore"]


@dataclass(slots=True)
class _Index:
    sources: dict[str, tuple[str, str, list[int]]] = field(default_factory=dict)
    """key -> (title word, meta JSON, passage rows in order)."""
    passages: dict[int, tuple[str, dict[str, int], int, str]] = field(default_factory=dict)
    """row -> (passage id, terms, chars, data JSON)."""
    ids: dict[str, int] = field(default_factory=dict)
    postings: dict[str, dict[int, int]] = field(default_factory=dict)
    lengths: dict[int, int] = field(default_factory=dict)
    peaks: dict[str, dict[str, int]] = field(default_factory=dict)
    """Each term's peaks (``kforge.store.passages.Peaks``), kept as removals leave them."""
    chars: int = 0

    def statistics(self) -> IndexStatistics:
        return IndexStatistics(
            passages=len(self.lengths), terms=sum(self.lengths.values()), chars=self.chars
        )

    def remove(self, key: str) -> None:
        old = self.sources.pop(key, None)
        for row in old[2] if old else ():
            passage, terms, chars, _ = self.passages.pop(row)
            self.ids.pop(passage, None)
            self.lengths.pop(row, None)
            self.chars -= chars
            for term in terms:
                posting = self.postings[term]
                del posting[row]
                if not posting:
                    del self.postings[term]

    def top(
        self,
        essential: Mapping[str, float],
        rest: Mapping[str, float],
        base: float,
        slope: float,
        k: int,
        slack: float,
    ) -> list[tuple[str, float]]:
        def share(w: float, tf: int, row: int) -> float:
            return w * tf / (tf + base + slope * self.lengths[row])

        totals: dict[int, float] = {}
        for term, w in essential.items():
            for row, tf in self.postings.get(term, {}).items():
                totals[row] = totals.get(row, 0.0) + share(w, tf, row)

        def complete(rows: Iterable[int]) -> dict[int, float]:
            scores = {row: totals[row] for row in rows}
            for term, w in rest.items():
                posting = self.postings.get(term, {})
                for row in scores:
                    if row in posting:
                        scores[row] += share(w, posting[row], row)
            return scores

        sample = heapq.nsmallest(FLOOR_SAMPLE * k, totals, key=lambda row: (-totals[row], row))
        scores = complete(sample)
        best = heapq.nlargest(k, scores.values())
        floor = best[-1] if len(best) >= k else 0.0
        if floor >= slack:
            scores |= complete(
                row for row, score in totals.items() if score >= floor - slack and row not in scores
            )
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [(self.passages[row][0], score) for row, score in ranked]


class MemoryPassageStore(MemoryDocuments):
    """``PassageStore`` in dictionaries; its documents are ``beside``'s when given."""

    def __init__(self, *, beside: MemoryDocuments | None = None) -> None:
        super().__init__(beside=beside)
        self._indexes: dict[str, _Index] = {}
        self._next_row = 0
        self._index_lock = threading.RLock()
        self._index_writes = 0

    def put_sources(self, index: str, sources: Sequence[IndexedSource]) -> None:
        with self._index_lock:
            self._index_writes += 1
            ix = self._indexes.setdefault(index, _Index())
            for source in sources:
                ix.remove(source.key)
                rows = []
                for p in source.passages:
                    self._next_row += 1
                    row = self._next_row
                    terms = {t: tf for t, tf in p.terms.items() if tf > 0}
                    ix.passages[row] = (p.id, terms, p.chars, dumps(p.data))
                    ix.ids[p.id] = row
                    ix.lengths[row] = sum(terms.values())
                    ix.chars += p.chars
                    for term, tf in terms.items():
                        ix.postings.setdefault(term, {})[row] = tf
                    add_peaks(ix.peaks, terms, ix.lengths[row])
                    rows.append(row)
                ix.sources[source.key] = (source.title_word, dumps(source.meta), rows)

    def delete_sources(self, index: str, keys: Iterable[str] | None = None) -> None:
        with self._index_lock:
            self._index_writes += 1
            if keys is None:
                self._indexes.pop(index, None)
                return
            ix = self._indexes.get(index)
            for key in keys if ix is not None else ():
                ix.remove(key)  # type: ignore[union-attr]

    def index_sources(self, index: str, keys: Iterable[str] | None = None) -> dict[str, Any]:
        with self._index_lock:
            ix = self._indexes.get(index, _Index())
            wanted = sorted(ix.sources if keys is None else set(keys) & set(ix.sources))
            return {k: loads(ix.sources[k][1]) for k in wanted}

    def sources_by_title_word(self, index: str, words: Iterable[str]) -> list[str]:
        with self._index_lock:
            ix = self._indexes.get(index, _Index())
            wanted = set(words)
            return sorted(k for k, (word, _, _) in ix.sources.items() if word in wanted)

    def read_passages(self, index: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        with self._index_lock:
            ix = self._indexes.get(index, _Index())
            rows = [ix.ids[i] for i in ids if i in ix.ids]
            return {ix.passages[r][0]: loads(ix.passages[r][3]) for r in rows}

    def source_passages(self, index: str, key: str | None = None) -> list[dict[str, Any]]:
        with self._index_lock:
            ix = self._indexes.get(index, _Index())
            keys = sorted(ix.sources) if key is None else [key] if key in ix.sources else []
            return [loads(ix.passages[r][3]) for k in keys for r in ix.sources[k][2]]

    def settle_index(self) -> None:
        """Nothing to settle: dictionaries keep no planner statistics (PostgreSQL's do)."""

    def index_statistics(self, index: str) -> IndexStatistics:
        with self._index_lock:
            return self._indexes.get(index, _Index()).statistics()

    def count_sources(self, index: str) -> int:
        with self._index_lock:
            return len(self._indexes.get(index, _Index()).sources)

    def index_version(self, index: str) -> str:
        with self._index_lock:
            return str(self._index_writes)

    def document_frequencies(self, index: str, terms: Iterable[str]) -> dict[str, int]:
        with self._index_lock:
            ix = self._indexes.get(index, _Index())
            return {t: len(ix.postings.get(t, ())) for t in terms}

    def search_passages(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> list[tuple[str, float]]:
        with self._index_lock:
            ix = self._indexes.get(index, _Index())
            frequencies = {t: len(ix.postings.get(t, ())) for t in terms}
            peaks = {t: ix.peaks[t] for t in terms if t in ix.peaks}
            return bm25_top(ix, ix.statistics(), frequencies, terms, k, k1=k1, b=b, peaks=peaks)

    def search_versioned(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> tuple[str, list[tuple[str, float]]]:
        with self._index_lock:  # no write between the two
            return self.index_version(index), self.search_passages(index, terms, k, k1=k1, b=b)

    def close(self) -> None:
        pass
