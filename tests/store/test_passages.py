"""The passage index on every store backend beyond the conformance suite: search of any
passages, the index version, any text; which must rank exactly as a BM25 index that reads
every posting."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kforge.rag.bm25 import BM25Index
from kforge.store import Store
from kforge.store.conformance_passages import K1 as CONFORMANCE_K1
from kforge.store.conformance_passages import B as CONFORMANCE_B
from kforge.store.conformance_passages import full_bm25
from kforge.store.conformance_passages import indexed_source as source
from kforge.store.passages import IndexedPassage, IndexedSource, IndexStatistics

K1, B = 1.2, 0.5


_names = itertools.count()
_terms = st.sampled_from(["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"])
_passage = st.dictionaries(_terms, st.integers(1, 4), min_size=1, max_size=5)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    passages=st.lists(_passage, min_size=1, max_size=40),
    query=st.lists(_terms, min_size=1, max_size=6),
    k=st.integers(1, 8),
)
def test_search_ranks_as_a_full_bm25_index(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    passages: list[dict[str, int]],
    query: list[str],
    k: int,
) -> None:
    """For any passages and query, the pruned search returns the same scores as scoring every
    posting (the order of equal scores aside); the first round reads one term's postings."""
    monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    name = f"p{next(_names)}"
    store.put_sources(name, [source(f"s{i:02d}", p) for i, p in enumerate(passages)])
    full = BM25Index()
    for i, p in enumerate(passages):
        full.add(f"s{i:02d}-0", p)
    expected = full.search(query, k)
    found = store.search_passages(name, query, k, k1=K1, b=B)
    assert [round(s, 9) for _, s in found] == [round(s, 9) for _, s in expected]
    scores = full.scores(query)
    assert all(abs(scores[p] - s) < 1e-9 for p, s in found)


def test_the_index_version_changes_with_every_write_from_anywhere(store: Store) -> None:
    """Equal versions mean the same postings: reads keep it, every write (this store's or
    another's on the same database) changes it."""
    store.put_sources("c", [source("a", {"cat": 1})])
    versions = [store.index_version("c")]
    store.search_passages("c", ["cat"], 5, k1=K1, b=B)
    store.read_passages("c", ["a-0"])
    assert store.index_version("c") == versions[-1] != ""
    for write in (
        lambda: store.put_sources("c", [source("b", {"dog": 1})]),
        lambda: store.delete_sources("c", ["a"]),
        lambda: store.delete_sources("c"),
        lambda: store.put_sources("c", [source("b", {"dog": 1})]),
    ):
        write()
        versions.append(store.index_version("c"))
    assert len(set(versions)) == len(versions)
    target = getattr(store, "path", None) or getattr(store, "url", None)
    if target is None:
        return  # one process's memory: no other writer
    from kforge.store.open import open_store

    other = open_store(str(target))
    other.put_sources("c", [source("e", {"emu": 1})])
    other.close()
    assert store.index_version("c") not in versions


def test_the_run_log_s_commits_leave_the_index_version_as_it_is(store: Store) -> None:
    """The run log commits on its own connection: a run's steps between two searches do not
    make the second one search again."""
    from kforge.store.conformance import new_run, thinking

    store.put_sources("c", [source("a", {"cat": 1})])
    version = store.index_version("c")
    store.create_run(new_run("r1"))
    for seq in (1, 2, 3):
        store.commit("r1", [thinking("r1", seq)], run_fields={"iteration": seq})
    store.put_docs("inbox:r1", {"i": {"action": "comment"}})
    assert store.index_version("c") == version


def test_any_text_in_terms_keys_and_data_is_stored_and_searched_as_given(store: Store) -> None:
    """Writes send a batch's texts joined by a separator where none holds it: texts holding it,
    line breaks or quotes take the other way and come back the same."""
    odd = ["x\x1ey", "line\nbreak", 'quo"te', "back\\slash", "tab\tbed", "ünï"]
    store.put_sources(
        "c",
        [
            source("plain", {"cat": 1}),
            IndexedSource(
                key="k\x1e1",
                meta={"key": "k\x1e1"},
                passages=[
                    IndexedPassage(
                        id="p\x1e0", terms={t: 1 for t in odd}, data={"text": "a\x1eb\n"}
                    )
                ],
            ),
        ],
    )
    assert store.document_frequencies("c", odd) == dict.fromkeys(odd, 1)
    assert [p for p, _ in store.search_passages("c", [odd[0], odd[1]], 5, k1=K1, b=B)] == ["p\x1e0"]
    assert store.read_passages("c", ["p\x1e0"]) == {"p\x1e0": {"text": "a\x1eb\n"}}
    assert list(store.index_sources("c")) == ["k\x1e1", "plain"]
    store.delete_sources("c", ["k\x1e1"])
    assert store.document_frequencies("c", odd) == dict.fromkeys(odd, 0)
    assert store.index_statistics("c") == IndexStatistics(passages=1, terms=1, chars=1)


@st.composite
def _corpora(draw: st.DrawFn) -> tuple[list[list[dict[str, int]]], list[int], list[int]]:
    """Sources of one to three passages over a vocabulary where a few terms are common and
    most are rare, the writes they come in, and which of them are removed afterwards."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    count = draw(st.integers(200, 1500))
    vocabulary = [f"v{i}" for i in range(60)]
    weights = [1 / (i + 1) ** 1.2 for i in range(len(vocabulary))]
    sources = [
        [
            {t: rng.randint(1, 4) for t in rng.choices(vocabulary, weights, k=rng.randint(2, 9))}
            for _ in range(rng.randint(1, 3))
        ]
        for _ in range(count)
    ]
    cuts = sorted(rng.sample(range(1, count), draw(st.integers(0, 11))))
    removed = rng.sample(range(count), int(count * draw(st.floats(0, 0.4))))
    return sources, cuts, removed


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    corpus=_corpora(),
    query=st.lists(st.integers(0, 59), min_size=1, max_size=7),
    k=st.integers(1, 12),
)
def test_pruned_search_of_larger_indexes_equals_scoring_every_posting(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    corpus: tuple[list[list[dict[str, int]]], list[int], list[int]],
    query: list[int],
    k: int,
) -> None:
    """For any index of hundreds to thousands of passages written in many writes, some of
    them removed later, the search that skips postings (of common terms, of passages that
    cannot reach the top k) ranks as scoring every posting would; the first round reads one
    term's postings, and blocks are read in stretches wherever a store keeps them so."""
    monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    monkeypatch.setattr("kforge.store.postgres_lists.WHOLE_SHARE", 2.0)
    monkeypatch.setattr("kforge.store.postgres_search._WHOLE_READ", 0)
    monkeypatch.setattr("kforge.store.postgres_search._TRIM_FROM", 1.0)  # floors of few
    sources, cuts, removed = corpus
    name = f"p{next(_names)}"
    keys = [f"s{i:04d}" for i in range(len(sources))]
    for start, end in itertools.pairwise([0, *cuts, len(sources)]):
        store.put_sources(name, [source(keys[i], *sources[i]) for i in range(start, end)])
    store.delete_sources(name, [keys[i] for i in removed])
    kept = {
        f"{keys[i]}-{n}": terms
        for i, held in enumerate(sources)
        if i not in set(removed)
        for n, terms in enumerate(held)
    }
    terms = [f"v{i}" for i in query]
    expected = full_bm25(kept, terms)
    found = store.search_passages(name, terms, k, k1=CONFORMANCE_K1, b=CONFORMANCE_B)
    best = sorted(expected.values(), reverse=True)[:k]
    assert [s for _, s in found] == pytest.approx(best, rel=0, abs=1e-9)
    assert all(abs(expected[p] - s) < 1e-9 for p, s in found)


def test_a_search_bounds_each_term_by_the_peaks_of_its_postings(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every store keeps, for each tf a term's postings hold, the least length of a passage
    holding it so often (its peaks) through writes and replacements, and a search bounds the
    term's share of a score by them; a removal leaves peaks that still bound what remains."""
    from kforge.store import passages

    given: dict[str, dict[str, int]] = {}
    real = passages.peak_share

    def spy(peaks: dict[str, int] | None, base: float, slope: float) -> float:
        given.update({"seen": dict(peaks or {})})
        return real(peaks, base, slope)

    monkeypatch.setattr(passages, "peak_share", spy)
    name = f"p{next(_names)}"
    store.put_sources(name, [source("a", {"cat": 1, "x": 3}, {"cat": 2, "x": 9})])
    store.put_sources(name, [source("b", {"cat": 1}, {"cat": 2, "y": 1})])
    store.search_passages(name, ["cat"], 3, k1=CONFORMANCE_K1, b=CONFORMANCE_B)
    assert given["seen"] == {"1": 1, "2": 3}
    store.put_sources(name, [source("b", {"cat": 3, "y": 2})])  # replaced
    store.delete_sources(name, ["a"])
    found = store.search_passages(name, ["cat"], 3, k1=CONFORMANCE_K1, b=CONFORMANCE_B)
    assert found == [("b-0", pytest.approx(full_bm25({"b-0": {"cat": 3, "y": 2}}, ["cat"])["b-0"]))]
    assert given["seen"]["3"] == 5


def test_a_floor_above_the_peaks_of_the_other_terms_ends_the_search_in_one_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rare term's passages reach a floor the other term's weight would not let pass (as
    if it could be held any number of times), but its peaks do (it is held once, in passages
    as long as the rare term's): one round, ranked as scoring every posting."""
    from kforge.store.memory import MemoryStore
    from kforge.store.passages import bm25_top

    monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    store = MemoryStore()
    sources = [source(f"r{i:03d}", {"rare": 1 + i % 2, "pad": 20}) for i in range(12)]
    sources += [source(f"c{i:03d}", {"common": 1, "pad": 20}) for i in range(13)]
    sources += [source(f"p{i:03d}", {"pad": 20}) for i in range(300)]
    store.put_sources("c", sources)
    ix = store.passages._indexes["c"]
    rounds: list[int] = []

    class Counted:
        def top(self, *args: Any) -> list[tuple[str, float]]:
            rounds.append(1)
            return ix.top(*args)

    query = ["rare", "common"]
    frequencies = {t: len(ix.postings[t]) for t in query}
    peaks = {t: ix.peaks[t] for t in query}
    found = bm25_top(
        Counted(),
        ix.statistics(),
        frequencies,
        query,
        10,
        k1=CONFORMANCE_K1,
        b=CONFORMANCE_B,
        peaks=peaks,
    )
    assert len(rounds) == 1
    expected = full_bm25({f"{s.key}-0": dict(s.passages[0].terms) for s in sources}, query)
    assert [p for p, _ in found] == sorted(expected, key=lambda p: (-expected[p], p))[:10]
    rounds.clear()
    assert (
        bm25_top(
            Counted(), ix.statistics(), frequencies, query, 10, k1=CONFORMANCE_K1, b=CONFORMANCE_B
        )
        == found
    )
    assert len(rounds) == 2  # bounded by its weight, the common term takes a second round


def test_a_versioned_search_reads_the_version_no_later_than_the_postings(store: Store) -> None:
    """``search_versioned`` is ``index_version`` and ``search_passages`` at once: the same
    version and ranking, and a write after it leaves the version it gave behind."""
    store.put_sources("c", [source("a", {"cat": 2}), source("b", {"cat": 1, "dog": 1})])
    version, ranked = store.search_versioned("c", ["cat", "dog"], 5, k1=K1, b=B)
    assert version == store.index_version("c") != ""
    assert ranked == store.search_passages("c", ["cat", "dog"], 5, k1=K1, b=B)
    assert [p for p, _ in ranked] == ["b-0", "a-0"]
    assert store.search_versioned("other", ["cat"], 5, k1=K1, b=B)[1] == []
    store.put_sources("c", [source("e", {"cat": 1})])
    again, _ = store.search_versioned("c", ["cat"], 5, k1=K1, b=B)
    assert again == store.index_version("c") != version
