"""The passage store: sources, their passages and the postings of their analyzed terms,
searched by BM25 where they are stored (``PassageStore``; the run log is another protocol,
``kforge.store.base.RunLog``).

A store holds any number of named indexes (a corpus is one). Each source is written with its
passages and postings in one transaction and removed the same way, so the index never holds
half a source. Search reads only the postings of the query's terms (see ``bm25_top``), so its
cost grows with how common those terms are, not with the size of the index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kforge.store.documents import DocumentStore

__all__ = [
    "FIRST_BUDGET",
    "FLOOR_SAMPLE",
    "MIN_BUDGET",
    "IndexStatistics",
    "IndexedPassage",
    "IndexedSource",
    "PassageIndex",
    "PassageStore",
    "Peaks",
    "Postings",
    "add_peaks",
    "bm25_top",
    "bm25_weights",
    "lucene_idf",
    "peak_share",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexedPassage:
    """One searchable passage: its id, its analyzed terms and what reading it returns."""

    id: str
    terms: Mapping[str, int]
    """How often each analyzed term occurs in the passage (its BM25 term frequencies)."""
    data: dict[str, Any]
    """What ``read_passages`` gives back (JSON-serializable)."""
    chars: int = 0
    """Characters of the passage's text, summed by ``index_statistics``."""

    @property
    def length(self) -> int:
        """The passage's length for BM25: how many terms it holds."""
        return sum(tf for tf in self.terms.values() if tf > 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexedSource:
    """A source (a file or an added document) with its passages, replaced as one."""

    key: str
    meta: dict[str, Any]
    """What ``index_sources`` gives back about the source (JSON-serializable)."""
    title_word: str = ""
    """A word of the source's title, for ``sources_by_title_word`` ("" for none)."""
    passages: Sequence[IndexedPassage] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexStatistics:
    """Counts of a whole index, kept up to date by every write (reading them costs one row)."""

    passages: int = 0
    terms: int = 0
    """The sum of all passage lengths (analyzed terms), for BM25's average length."""
    chars: int = 0
    """The sum of all passage texts' characters."""

    @property
    def average_length(self) -> float:
        return self.terms / self.passages if self.passages else 0.0


class PassageIndex(Protocol):
    """What a store offers for passage indexes named by ``index``; every write is one
    transaction."""

    def put_sources(self, index: str, sources: Sequence[IndexedSource]) -> None:
        """Add or replace each source with its passages and postings (an earlier version's
        passages and postings go)."""
        ...

    def delete_sources(self, index: str, keys: Iterable[str] | None = None) -> None:
        """Remove sources with their passages and postings (the whole index when ``keys`` is
        None); unknown keys are ignored."""
        ...

    def index_sources(self, index: str, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """The ``meta`` of every source (or of ``keys``), by key, in key order."""
        ...

    def sources_by_title_word(self, index: str, words: Iterable[str]) -> list[str]:
        """Keys of the sources whose ``title_word`` is one of ``words``, in key order."""
        ...

    def read_passages(self, index: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The ``data`` of the passages ``ids`` that exist, by id."""
        ...

    def source_passages(self, index: str, key: str | None = None) -> list[dict[str, Any]]:
        """The ``data`` of the passages of source ``key`` (of every source when None), in the
        order they were given, sources in key order."""
        ...

    def index_statistics(self, index: str) -> IndexStatistics: ...

    def count_sources(self, index: str) -> int:
        """How many sources the index holds (0 for an index never written), counted in the
        store without reading their records."""
        ...

    def index_version(self, index: str) -> str:
        """A token that changes whenever the index is written, by this process or any other
        (it may change more often); two equal tokens mean the same postings, so a search made
        under one may be reused under the other. One cheap read."""
        ...

    def document_frequencies(self, index: str, terms: Iterable[str]) -> dict[str, int]:
        """How many passages hold each term (absent terms: 0); one indexed lookup per term."""
        ...

    def search_passages(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> list[tuple[str, float]]:
        """The ``k`` best ``(passage id, BM25 score)`` for the analyzed query ``terms``, best
        first (ties in the order passages were written); see ``bm25_top``."""
        ...

    def search_versioned(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> tuple[str, list[tuple[str, float]]]:
        """``index_version`` and ``search_passages`` at once (in one read where the store
        can): the version is read no later than the postings, so a write between the two
        leaves a version older than the ranking, never newer (a ranking kept under it is not
        reused after that write)."""
        ...

    def settle_index(self) -> None:
        """After many writes (an ingest), bring what the database knows of the index tables up
        to date, so that searches right after are planned and read as fast as later ones."""
        ...


@runtime_checkable
class PassageStore(DocumentStore, PassageIndex, Protocol):
    """What document retrieval (``kforge.rag``) reads and writes: passage indexes, and the
    documents kept beside them (the corpus catalog, sources' metadata, dense vectors)."""

    def close(self) -> None: ...


def lucene_idf(passages: int, df: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))``: never negative, so a term most passages hold
    still counts a little."""
    return math.log(1.0 + (passages - df + 0.5) / (df + 0.5))


Peaks = Mapping[str, int]
"""A term's peaks: for each tf its postings hold (as a string, the way JSON keys it), the least
length of a passage holding the term that many times. Scores of a term's postings never exceed
the score of its peaks (``peak_share``), whatever BM25's parameters and average length."""


def add_peaks(peaks: dict[str, dict[str, int]], terms: Mapping[str, int], length: int) -> None:
    """Take into ``peaks`` (term -> ``Peaks``) the postings of a passage of ``length`` holding
    ``terms`` (term -> tf)."""
    for term, tf in terms.items():
        held = peaks.setdefault(term, {})
        key = str(tf)
        least = held.get(key)
        if least is None or length < least:
            held[key] = length


def peak_share(peaks: Peaks | None, base: float, slope: float) -> float:
    """The most ``tf / (tf + base + slope * length)`` any posting of a term with ``peaks``
    reaches: its share of a score over its weight. 1 (the bound as tf grows) when the peaks
    are unknown; removing passages leaves peaks that bound the rest still."""
    if not peaks:
        return 1.0
    return max(int(tf) / (int(tf) + base + slope * length) for tf, length in peaks.items())


FLOOR_SAMPLE = 20
"""``Postings.top`` completes the scores of this many times ``k`` passages first: the ``k``-th
best of them is the floor a passage must be able to reach to be looked at further."""


class Postings(Protocol):
    """The read ``bm25_top`` makes of a backend's postings."""

    def top(
        self,
        essential: Mapping[str, float],
        rest: Mapping[str, float],
        base: float,
        slope: float,
        k: int,
        slack: float,
    ) -> list[tuple[str, float]]:
        """The ``k`` best ``(passage id, score)`` among the passages whose scores were
        completed, best first, ties in the order passages were written.

        A term's share of a score is ``w * tf / (tf + base + slope * length)`` with ``w`` its
        weight; the ``essential`` terms' shares are summed from their postings, and the
        ``rest`` terms' shares are looked up, passage by passage, for the ``FLOOR_SAMPLE * k``
        passages of best essential sum (the ``k``-th best of their totals is the floor); then,
        only when the floor reaches ``slack`` (the answer can be exact), for every other
        passage whose essential sum is within ``slack`` of the floor (the others cannot reach
        the top ``k``)."""
        ...


FIRST_BUDGET = 0.05
"""The first round reads the postings of the rarest terms up to this share of the passages"""
MIN_BUDGET = 1000
"""... or up to this many postings, whichever is more (small indexes read everything)."""
_MARGIN = 1.0 + 1e-9
_REST_SHARE = 0.6
"""A later round keeps out common terms whose bounds sum to at most this share of the floor
found: the nearer to the floor, the more passages it must look at term by term."""


def bm25_weights(
    statistics: IndexStatistics,
    frequencies: Mapping[str, int],
    terms: Sequence[str],
    *,
    k1: float,
    b: float,
) -> tuple[dict[str, float], float, float]:
    """``(weights, base, slope)`` of Okapi BM25 with Lucene's idf: a passage of ``length``
    terms holding a query term ``tf`` times scores ``weights[term] * tf / (tf + base + slope *
    length)`` for it. Only terms some passage holds have a weight; a term repeated in the
    query counts once per occurrence, as in Lucene."""
    counts: dict[str, int] = {}
    for term in terms:
        if frequencies.get(term, 0) > 0:
            counts[term] = counts.get(term, 0) + 1
    n = statistics.passages
    if n <= 0:
        return {}, 0.0, 0.0
    weights = {t: lucene_idf(n, frequencies[t]) * c * (k1 + 1.0) for t, c in counts.items()}
    average = statistics.average_length
    base = k1 * (1.0 - b) if average > 0 else k1
    slope = k1 * b / average if average > 0 else 0.0
    return weights, base, slope


def bm25_top(
    postings: Postings,
    statistics: IndexStatistics,
    frequencies: Mapping[str, int],
    terms: Sequence[str],
    k: int,
    *,
    k1: float,
    b: float,
    peaks: Mapping[str, Peaks] | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` best ``(passage id, score)`` by Okapi BM25 with Lucene's idf, exactly as if
    every posting of every query term were read, best first.

    MaxScore pruning: the postings of the rarest terms (``essential``) are scored in full; a
    passage holding none of them scores at most the sum of the other terms' upper bounds (each
    its weight times ``peak_share`` of its ``peaks``, its weight ``idf * (k1 + 1)`` where they
    are not given), so once the ``k``-th best score reaches that sum no such passage
    can enter, and the common terms' frequencies are looked up only for the candidates that
    can still reach the top. When the bound is not met, more terms become essential, up to all
    of them.
    """
    weights, base, slope = bm25_weights(statistics, frequencies, terms, k1=k1, b=b)
    if k <= 0 or not weights:
        return []
    n = statistics.passages
    known = peaks or {}
    # a hair above the most a posting scores: a score summed in another order stays below it
    bounds = {t: w * peak_share(known.get(t), base, slope) * _MARGIN for t, w in weights.items()}
    ordered = sorted(weights, key=lambda t: (frequencies[t], t))
    budget = max(float(MIN_BUDGET), FIRST_BUDGET * n)
    essential: list[str] = []
    read = 0
    for term in ordered:
        if essential and read + frequencies[term] > budget:
            break
        essential.append(term)
        read += frequencies[term]
    while True:
        rest = ordered[len(essential) :]
        slack = sum(bounds[t] for t in rest)
        found = postings.top(
            {t: weights[t] for t in essential},
            {t: weights[t] for t in rest},
            base,
            slope,
            k,
            slack,
        )
        if not rest or (len(found) >= k and found[k - 1][1] >= slack):
            return found
        # the k-th score found is a floor for the true one, and stays found when more terms
        # are essential: keep out only common terms whose bounds together stay well below it,
        # so the next round is the last and looks at few passages term by term
        floor = found[k - 1][1] if len(found) >= k else 0.0
        kept_out = 0.0
        cut = len(ordered)
        while (
            cut > len(essential) + 1 and kept_out + bounds[ordered[cut - 1]] <= _REST_SHARE * floor
        ):
            cut -= 1
            kept_out += bounds[ordered[cut]]
        essential = ordered[:cut]
