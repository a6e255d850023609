"""The passage store's conformance suite (``kforge.store.conformance`` documents how to run
it): ingest, update, remove and search, each search checked against BM25 scored by reading
every posting, however the store lays its postings out."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence

import pytest

from kforge.store.conformance_documents import DocumentStoreConformance, override_store
from kforge.store.passages import (
    IndexedPassage,
    IndexedSource,
    IndexStatistics,
    PassageStore,
    bm25_weights,
)

__all__ = ["K1", "B", "PassageStoreConformance", "full_bm25", "indexed_source"]

K1, B = 1.2, 0.75


def indexed_source(key: str, *passages: Mapping[str, int], title: str = "") -> IndexedSource:
    """Source ``key`` whose passages ``key-0``, ``key-1``, ... hold ``passages``' terms."""
    return IndexedSource(
        key=key,
        meta={"key": key, "title": title},
        title_word=title.lower().split()[0] if title else "",
        passages=[
            IndexedPassage(
                id=f"{key}-{i}", terms=terms, data={"id": f"{key}-{i}", "n": i}, chars=10 * i + 1
            )
            for i, terms in enumerate(passages)
        ],
    )


def full_bm25(passages: Mapping[str, Mapping[str, int]], query: Sequence[str]) -> dict[str, float]:
    """Every passage's BM25 score for ``query`` (those holding none of its terms left out),
    read from every posting: what a store's ``search_passages`` must return the best of."""
    lengths = {p: sum(tf for tf in terms.values() if tf > 0) for p, terms in passages.items()}
    statistics = IndexStatistics(passages=len(passages), terms=sum(lengths.values()))
    df = {t: sum(1 for terms in passages.values() if terms.get(t, 0) > 0) for t in set(query)}
    weights, base, slope = bm25_weights(statistics, df, query, k1=K1, b=B)
    scores: dict[str, float] = {}
    for p, terms in passages.items():
        shares = [
            w * terms[t] / (terms[t] + base + slope * lengths[p])
            for t, w in weights.items()
            if terms.get(t, 0) > 0
        ]
        if shares:
            scores[p] = sum(shares)
    return scores


def _assert_best(
    store: PassageStore, index: str, passages: Mapping[str, Mapping[str, int]]
) -> None:
    """Searches of single terms and of mixes of rare and common ones return the best scores of
    ``full_bm25``, each passage with its own score."""
    terms = sorted({t for held in passages.values() for t in held})
    rng = random.Random(len(passages))
    queries = [[t] for t in terms[:3]] + [rng.sample(terms, min(4, len(terms))) for _ in range(6)]
    for query in queries:
        for k in (1, 3, 10):
            expected = full_bm25(passages, query)
            found = store.search_passages(index, query, k, k1=K1, b=B)
            best = sorted(expected.values(), reverse=True)[:k]
            assert [round(s, 9) for _, s in found] == [round(s, 9) for s in best], query
            assert all(abs(expected[p] - s) < 1e-9 for p, s in found), query


class PassageStoreConformance(DocumentStoreConformance):
    """What every ``kforge.store.passages.PassageStore`` must do; a subclass named ``Test...``
    overrides ``store`` with a new, empty passage store."""

    @pytest.fixture
    def store(self) -> Iterator[PassageStore]:
        override_store(self)

    def test_ingest_then_read_and_search(self, store: PassageStore) -> None:
        store.put_sources(
            "c",
            [
                indexed_source("a", {"cat": 2, "dog": 1}, {"fish": 1}, title="Cats and dogs"),
                indexed_source("b", {"dog": 3}, title="Dogs"),
            ],
        )
        assert list(store.index_sources("c")) == ["a", "b"]
        assert store.count_sources("c") == 2 and store.count_sources("other") == 0
        assert store.index_sources("c", ["b", "zz"]) == {"b": {"key": "b", "title": "Dogs"}}
        assert store.read_passages("c", ["a-1", "nope"]) == {"a-1": {"id": "a-1", "n": 1}}
        assert [p["id"] for p in store.source_passages("c")] == ["a-0", "a-1", "b-0"]
        assert [p["id"] for p in store.source_passages("c", "a")] == ["a-0", "a-1"]
        assert store.index_statistics("c") == IndexStatistics(passages=3, terms=7, chars=13)
        assert store.document_frequencies("c", ["dog", "cat", "emu"]) == {
            "dog": 2,
            "cat": 1,
            "emu": 0,
        }
        assert store.sources_by_title_word("c", ["dogs", "cats"]) == ["a", "b"]
        top = store.search_passages("c", ["dog"], 5, k1=K1, b=B)
        assert [p for p, _ in top] == ["b-0", "a-0"] and top[0][1] > top[1][1] > 0
        assert store.search_passages("c", ["emu"], 5, k1=K1, b=B) == []
        assert store.search_passages("other", ["dog"], 5, k1=K1, b=B) == []
        assert store.index_statistics("other") == IndexStatistics()

    def test_update_replaces_a_source_and_remove_takes_its_postings(
        self, store: PassageStore
    ) -> None:
        store.put_sources(
            "c", [indexed_source("a", {"cat": 1}), indexed_source("b", {"cat": 1, "dog": 1})]
        )
        store.put_sources("d", [indexed_source("a", {"cat": 1})])
        store.put_sources("c", [indexed_source("a", {"emu": 2}, {"emu": 1})])
        store.settle_index()
        assert store.document_frequencies("c", ["cat", "emu"]) == {"cat": 1, "emu": 2}
        assert [p for p, _ in store.search_passages("c", ["cat"], 5, k1=K1, b=B)] == ["b-0"]
        assert store.index_statistics("c").passages == 3
        store.delete_sources("c", ["b", "unknown"])
        assert store.search_passages("c", ["cat"], 5, k1=K1, b=B) == []
        assert store.document_frequencies("c", ["dog"]) == {"dog": 0}
        assert store.index_statistics("c") == IndexStatistics(passages=2, terms=3, chars=12)
        assert store.count_sources("c") == 1 and store.count_sources("d") == 1
        store.delete_sources("c")
        assert store.index_sources("c") == {} and store.index_statistics("c") == IndexStatistics()
        assert store.count_sources("c") == 0
        assert [p for p, _ in store.search_passages("d", ["cat"], 5, k1=K1, b=B)] == ["a-0"]

    def test_a_term_written_by_many_writes_is_searched_whole(self, store: PassageStore) -> None:
        """Each write adds a term's postings apart from the earlier ones (a store may keep
        them so); seventy writes of one term, with others, still rank as one index."""
        rng = random.Random(7)
        passages: dict[str, dict[str, int]] = {}
        for write in range(70):
            terms = {"common": rng.randint(1, 3), f"w{write % 9}": 1, f"r{write}": 2}
            store.put_sources("c", [indexed_source(f"s{write:02d}", terms)])
            passages[f"s{write:02d}-0"] = terms
        store.put_sources("c", [indexed_source("big", *({"common": 1},) * 20)])
        passages |= {f"big-{i}": {"common": 1} for i in range(20)}
        _assert_best(store, "c", passages)
        assert store.document_frequencies("c", ["common"]) == {"common": 90}
        store.settle_index()
        _assert_best(store, "c", passages)

    def test_removed_and_replaced_passages_never_come_back(self, store: PassageStore) -> None:
        """Searches after removing most of an index (a store may purge what was removed at
        once or later), replacing sources and writing again rank only what is there now."""
        rng = random.Random(11)
        vocabulary = [f"t{i}" for i in range(40)]

        def terms() -> dict[str, int]:
            return {t: rng.randint(1, 3) for t in rng.sample(vocabulary, 6)}

        sources = {f"s{i:03d}": [terms() for _ in range(3)] for i in range(150)}
        for start in range(0, 150, 50):
            keys = sorted(sources)[start : start + 50]
            store.put_sources("c", [indexed_source(k, *sources[k]) for k in keys])
        gone = sorted(sources)[:120]
        store.delete_sources("c", gone[:60])
        store.delete_sources("c", gone[60:])
        for key in gone:
            del sources[key]
        replaced = sorted(sources)[:10]
        for key in replaced:
            sources[key] = [terms()]
        store.put_sources("c", [indexed_source(k, *sources[k]) for k in replaced])

        def passages() -> dict[str, dict[str, int]]:
            return {f"{k}-{i}": p for k, held in sources.items() for i, p in enumerate(held)}

        assert store.index_statistics("c").passages == len(passages())
        assert store.read_passages("c", [f"{gone[0]}-0", f"{replaced[0]}-1"]) == {}
        _assert_best(store, "c", passages())
        store.settle_index()
        sources["new"] = [terms(), terms()]
        store.put_sources("c", [indexed_source("new", *sources["new"])])
        _assert_best(store, "c", passages())
        held = {t: sum(1 for p in passages().values() if t in p) for t in vocabulary}
        assert store.document_frequencies("c", vocabulary) == held
