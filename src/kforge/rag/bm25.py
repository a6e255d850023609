"""An in-memory Okapi BM25 index over analyzed terms, updatable one document at a time."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["BM25Index", "BM25Params"]


@dataclass(frozen=True, slots=True)
class BM25Params:
    """BM25 constants, chosen on the SciFact *train* queries (the middle of a flat optimum)."""

    k1: float = 1.2
    """Term-frequency saturation: higher lets repeated terms count for more."""
    b: float = 0.5
    """Length normalization: 0 ignores document length, 1 normalizes fully."""

    def __post_init__(self) -> None:
        if self.k1 < 0:
            raise ValueError(f"BM25 k1 must be >= 0 (got {self.k1})")
        if not 0.0 <= self.b <= 1.0:
            raise ValueError(f"BM25 b must be between 0 and 1 (got {self.b})")


class BM25Index:
    """Documents are term-frequency maps keyed by an id; scores use Lucene's BM25 idf.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` is never negative, so a term that occurs in
    most documents still counts a little instead of pushing documents down.
    """

    def __init__(self, params: BM25Params | None = None) -> None:
        self.params = params or BM25Params()
        self._postings: dict[str, dict[str, int]] = {}
        self._doc_terms: dict[str, tuple[str, ...]] = {}
        self._lengths: dict[str, int] = {}
        self._total_length = 0
        self._norms: dict[str, float] | None = None

    def __len__(self) -> int:
        return len(self._lengths)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._lengths

    @property
    def vocabulary_size(self) -> int:
        return len(self._postings)

    def add(self, doc_id: str, term_frequencies: Mapping[str, int]) -> None:
        """Index a document, replacing any earlier version with the same id."""
        if doc_id in self._lengths:
            self.remove(doc_id)
        length = 0
        for term, tf in term_frequencies.items():
            if tf <= 0:
                continue
            self._postings.setdefault(term, {})[doc_id] = tf
            length += tf
        self._doc_terms[doc_id] = tuple(t for t, tf in term_frequencies.items() if tf > 0)
        self._lengths[doc_id] = length
        self._total_length += length
        self._norms = None

    def add_many(self, docs: Iterable[tuple[str, Mapping[str, int]]]) -> None:
        for doc_id, tf in docs:
            self.add(doc_id, tf)

    def remove(self, doc_id: str) -> None:
        """Forget a document; unknown ids are ignored."""
        length = self._lengths.pop(doc_id, None)
        if length is None:
            return
        for term in self._doc_terms.pop(doc_id):
            posting = self._postings[term]
            del posting[doc_id]
            if not posting:
                del self._postings[term]
        self._total_length -= length
        self._norms = None

    def document_frequency(self, term: str) -> int:
        return len(self._postings.get(term, ()))

    def idf(self, term: str) -> float:
        n = len(self._lengths)
        df = self.document_frequency(term)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _length_norms(self) -> dict[str, float]:
        """Per document ``k1 * (1 - b + b * length / average_length)``, cached until a change."""
        if self._norms is None:
            k1, b = self.params.k1, self.params.b
            avg = self._total_length / len(self._lengths) if self._lengths else 0.0
            if avg <= 0:
                self._norms = dict.fromkeys(self._lengths, k1)
            else:
                self._norms = {d: k1 * (1.0 - b + b * n / avg) for d, n in self._lengths.items()}
        return self._norms

    def scores(self, query_terms: Iterable[str]) -> dict[str, float]:
        """BM25 score of every document that shares at least one term with the query.

        A term repeated in the query counts once per occurrence, as in Lucene.
        """
        weights: dict[str, int] = {}
        for term in query_terms:
            if term in self._postings:
                weights[term] = weights.get(term, 0) + 1
        if not weights:
            return {}
        norms = self._length_norms()
        k1_plus_1 = self.params.k1 + 1.0
        totals: dict[str, float] = {}
        for term, count in weights.items():
            idf = self.idf(term) * count * k1_plus_1
            for doc_id, tf in self._postings[term].items():
                totals[doc_id] = totals.get(doc_id, 0.0) + idf * tf / (tf + norms[doc_id])
        return totals

    def search(self, query_terms: Iterable[str], k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` best ``(doc_id, score)`` pairs, best first; ties broken by id for stability."""
        if k <= 0:
            return []
        totals = self.scores(query_terms)
        best = heapq.nsmallest(k, totals.items(), key=lambda item: (-item[1], item[0]))
        return [(doc_id, score) for doc_id, score in best]
